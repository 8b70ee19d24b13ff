"""End `vis python` as python3 ends after an uncaught KeyboardInterrupt: finish what Py_Finalize
would (non-daemon threads, atexit, flushed streams), then SIGINT with its default action, sent
from the interpreter thread, the one thread of the process that does not block it."""

import atexit
import os
import signal
import sys
import threading

threading._shutdown()
atexit._run_exitfuncs()
for stream in (sys.stdout, sys.stderr):
    try:
        stream.flush()
    except Exception:
        pass
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.kill(os.getpid(), signal.SIGINT)
