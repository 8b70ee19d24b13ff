"""The trusted worker's side: realising extensions, calling their tools and hooks,
running their tests, and reading a project's declared layout."""

import os as _os
import sys as _sys

# Bytecode is read and written only under the vis home, never in a __pycache__ beside an
# extension's sources: a project's folder is trusted by the hash of its sources (src/extensions/
# trust.ts), and a planted .pyc there would run in place of a trusted source.
if _os.environ.get("VIS_HOME"):
    _sys.pycache_prefix = _os.path.join(_os.environ["VIS_HOME"], "cache", "extension-bytecode")
