"""The trusted worker's side: realising extensions, calling their tools and hooks,
running their tests, and reading a project's declared layout."""
