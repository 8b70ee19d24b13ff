"""The runtime a model's Python lives in: whole-block coroutines, tools as awaitables,
state that persists across blocks, and errors a model can act on.

The worker imports `vis_guest.api` and calls its functions with JSON arguments."""
