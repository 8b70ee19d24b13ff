"""Runs an extension's own tests with real pytest in a trusted worker.

The result is what a collector plugin saw, one record per test (or per file that could
not be collected): the host derives counts and pass/fail from the records, never from
pytest's printed output."""

import os

from . import extensions


class Collector:
    """A pytest plugin keeping one record per test id."""

    def __init__(self):
        self.records = {}

    def _put(self, nodeid, outcome, message, file):
        self.records[nodeid] = {"nodeid": nodeid, "outcome": outcome, "message": message, "file": file}

    @staticmethod
    def _message(report):
        longrepr = getattr(report, "longrepr", None)
        if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (file, line, reason)
            return str(longrepr[2])
        crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
        if crash is not None and getattr(crash, "message", None):
            return crash.message
        text = getattr(report, "longreprtext", "") or ""
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        # pytest marks error lines with a leading "E   ".
        return lines[-1].removeprefix("E").strip() if lines else ""

    @staticmethod
    def _file(report, root):
        fspath = getattr(report, "fspath", None) or report.nodeid.split("::")[0]
        return os.path.normpath(os.path.join(root, str(fspath)))

    def pytest_sessionstart(self, session):
        self.root = str(session.config.rootpath)

    def pytest_collectreport(self, report):
        if report.failed:
            self._put(report.nodeid or "<collection>", "error", self._message(report), self._file(report, self.root))

    def pytest_runtest_logreport(self, report):
        file = self._file(report, self.root)
        if report.when == "call":
            outcome = report.outcome  # passed / failed / skipped
            if hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            self._put(report.nodeid, outcome, self._message(report) if not report.passed else "", file)
        elif report.failed:
            self._put(report.nodeid, "error", f"{report.when}: {self._message(report)}", file)
        elif report.skipped and report.nodeid not in self.records:
            self._put(report.nodeid, "skipped", self._message(report), file)


def run_tests(dirs, spec, files, root):
    """pytest on `files` after realising the extension the way the loader does."""
    import pytest

    extensions.realise(dirs, spec)
    collector = Collector()
    args = [
        "--import-mode=importlib",
        # One unimportable file is a reported error, not the end of the run.
        "--continue-on-collection-errors",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        root,
        # No conftest.py above the extension folder: the project around it is a place sessions
        # write, and only the folder's own (trusted, hashed) files may run here.
        "--confcutdir",
        root if spec["kind"] == "file" else os.path.dirname(root),
        # An empty inifile: the user's pytest.ini/pyproject elsewhere must not reconfigure us.
        "-c",
        os.devnull,
        "-q",
        *files,
    ]
    code = pytest.main(args, plugins=[collector])
    return {"exit_code": int(code), "records": list(collector.records.values())}
