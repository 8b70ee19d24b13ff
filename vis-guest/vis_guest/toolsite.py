"""Python's `usercustomize` in tool jails (shell, background shells).

The host points PYTHONUSERBASE of a tool jail at a read-only tree whose
lib/python3.X/site-packages/usercustomize.py is a link to this file, so a `python3` the
shell runs routes its sockets and name lookups through the session's egress proxy the way
a block does (net.py): `socket.create_connection(("allowed.host", 443))` in a script works
from shell() too. It loads net.py by path and nothing else of the guest runtime. A Python
run with -s/-I skips it and finds no route out, which fails safe."""

import importlib.util
import os


def _install() -> None:
    path = os.path.join(os.path.dirname(os.path.realpath(__file__)), "net.py")
    spec = importlib.util.spec_from_file_location("_vis_tool_net", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.install()


_install()
