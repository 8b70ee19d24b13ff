"""The session worker's side of the wire, run by the native wire mode (src/worker)."""
