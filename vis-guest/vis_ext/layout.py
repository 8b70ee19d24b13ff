"""What a Python project declares about its import roots and test paths.

Read with Python's own parsers (tomllib, configparser) so the answer matches what the
project's tools see. Only raw declared strings come back; the host resolves them against
the project directory. A file that cannot be parsed gives a warning and nothing.

This runs on the host, unconfined, over a directory the sandbox writes: it opens no file.
The host reads the metadata files beneath the directory (no links, no FIFOs, bounded:
src/project/declared.ts) and hands their text over.

Run as a script: ``python -I layout.py < files.json`` (``{"pyproject.toml": text, ...}``,
the files present) prints one JSON object.
"""

import configparser
import json
import os
import sys
import tomllib

# An entry: where a string was declared and what it names.
#   kind "root":    a directory to put on sys.path as is
#   kind "package": the directory of package `package` (its import root is above it)
#   kind "tests":   a pytest testpath


def _entry(file, key, kind, value, package=None):
    e = {"file": file, "key": key, "kind": kind, "value": value}
    if package is not None:
        e["package"] = package
    return e


class _Collector:
    def __init__(self, files):
        self.files = files
        self.entries = []
        self.warnings = []

    def warn(self, file, message):
        self.warnings.append({"file": file, "message": message})

    def strings(self, file, key, value, allow_str=True):
        """A declared value as a list of strings, or [] plus a warning for a wrong type."""
        if value is None:
            return []
        if isinstance(value, str) and allow_str:
            return [value]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        self.warn(file, f"{key} should be a list of strings, not {type(value).__name__}")
        return []


def _table(file, col, data, dotted):
    """data[a][b]... for a dotted path, or None; a non-table on the way is a warning."""
    cur = data
    walked = []
    for part in dotted.split("."):
        walked.append(part)
        if not isinstance(cur, dict):
            col.warn(file, f"{'.'.join(walked[:-1])} should be a table")
            return None
        cur = cur.get(part)
        if cur is None:
            return None
    return cur


def _package_dir(file, key, col, mapping):
    """setuptools/pdm-style package-dir: {"": "src"} or {"pkg": "lib/pkg"}."""
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        col.warn(file, f"{key} should be a table of strings")
        return
    for name, path in mapping.items():
        if name == "":
            col.entries.append(_entry(file, key, "root", path))
        else:
            col.entries.append(_entry(file, key, "package", path, package=name))


def _pyproject(col):
    file = "pyproject.toml"
    text = col.files.get(file)
    if text is None:
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        col.warn(file, f"cannot parse: {e}")
        return None

    where_key = "tool.setuptools.packages.find.where"
    for v in col.strings(file, where_key, _table(file, col, data, where_key)):
        col.entries.append(_entry(file, where_key, "root", v))

    pd_key = "tool.setuptools.package-dir"
    pd = _table(file, col, data, pd_key)
    if pd is not None:
        _package_dir(file, pd_key, col, pd)

    poetry_key = "tool.poetry.packages"
    packages = _table(file, col, data, poetry_key)
    if packages is not None:
        if not isinstance(packages, list):
            col.warn(file, f"{poetry_key} should be an array of tables")
        else:
            for p in packages:
                if not isinstance(p, dict):
                    col.warn(file, f"{poetry_key} entries should be tables")
                    continue
                src = p.get("from")
                if isinstance(src, str):
                    col.entries.append(_entry(file, poetry_key + "[].from", "root", src))
                elif src is not None:
                    col.warn(file, f"{poetry_key}[].from should be a string")

    # Hatch names package directories; each one's parent is the import root.
    for hatch_key in ("tool.hatch.build.targets.wheel.packages", "tool.hatch.build.packages"):
        for v in col.strings(file, hatch_key, _table(file, col, data, hatch_key), allow_str=False):
            name = os.path.basename(os.path.normpath(v))
            col.entries.append(_entry(file, hatch_key, "package", v, package=name))

    # pdm: `package-dir = "src"` under [tool.pdm.build] (older releases: [tool.pdm]).
    for pdm_key in ("tool.pdm.build.package-dir", "tool.pdm.package-dir"):
        v = _table(file, col, data, pdm_key)
        if isinstance(v, str):
            col.entries.append(_entry(file, pdm_key, "root", v))
        elif v is not None:
            col.warn(file, f"{pdm_key} should be a string")

    return data


def _split_ini_list(text):
    return [p for p in text.split() if p]


def _ini(col, file):
    """A configparser view of an ini-style file, or None when missing or malformed."""
    text = col.files.get(file)
    if text is None:
        return None
    cp = configparser.ConfigParser(interpolation=None)
    try:
        cp.read_string(text, source=file)
    except configparser.Error as e:
        col.warn(file, f"cannot parse: {e}")
        return None
    return cp


def _setup_cfg_package_dir(col, cp):
    file = "setup.cfg"
    key = "options.package_dir"
    if not cp.has_option("options", "package_dir"):
        return
    for line in cp.get("options", "package_dir").splitlines():
        line = line.strip()
        if not line:
            continue
        if "=" not in line:
            col.warn(file, f"{key}: expected 'name = path', got {line!r}")
            continue
        name, _, path = (s.strip() for s in line.partition("="))
        if name == "":
            col.entries.append(_entry(file, key, "root", path))
        else:
            col.entries.append(_entry(file, key, "package", path, package=name))


def _pytest_options(col, pyproject, ini_files):
    """pythonpath/testpaths from the one config file pytest itself would pick.

    pytest takes the first of pytest.ini (even without a [pytest] section),
    pyproject.toml with [tool.pytest.ini_options], tox.ini with [pytest],
    setup.cfg with [tool:pytest].
    """
    pytest_ini = ini_files.get("pytest.ini")
    if pytest_ini is not None:
        if pytest_ini.has_section("pytest"):
            _ini_pytest(col, "pytest.ini", pytest_ini, "pytest")
        return
    if "pytest.ini" in col.files:
        return  # present but malformed: already warned, and it would still win
    opts = _table("pyproject.toml", col, pyproject, "tool.pytest.ini_options") if pyproject else None
    if opts is not None:
        if not isinstance(opts, dict):
            col.warn("pyproject.toml", "tool.pytest.ini_options should be a table")
            return
        for name, kind in (("pythonpath", "root"), ("testpaths", "tests")):
            key = f"tool.pytest.ini_options.{name}"
            value = opts.get(name)
            values = _split_ini_list(value) if isinstance(value, str) else col.strings("pyproject.toml", key, value)
            for v in values:
                col.entries.append(_entry("pyproject.toml", key, kind, v))
        return
    for file, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        cp = ini_files.get(file)
        if cp is not None and cp.has_section(section):
            _ini_pytest(col, file, cp, section)
            return


def _ini_pytest(col, file, cp, section):
    for name, kind in (("pythonpath", "root"), ("testpaths", "tests")):
        if cp.has_option(section, name):
            for v in _split_ini_list(cp.get(section, name)):
                col.entries.append(_entry(file, f"{section}.{name}", kind, v))


def declared_layout(files):
    """Every import root and test path the project's metadata declares, as raw strings.

    `files`: the text of each metadata file present, by name."""
    col = _Collector(files)
    pyproject = _pyproject(col)
    ini_files = {}
    for file in ("setup.cfg", "pytest.ini", "tox.ini"):
        cp = _ini(col, file)
        if cp is not None:
            ini_files[file] = cp
    if "setup.cfg" in ini_files:
        _setup_cfg_package_dir(col, ini_files["setup.cfg"])
    _pytest_options(col, pyproject, ini_files)
    return {"entries": col.entries, "warnings": col.warnings}


def main(argv):
    if len(argv) != 1:
        sys.stderr.write("usage: layout.py < files.json\n")
        return 2
    files = json.load(sys.stdin)
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        sys.stderr.write("layout.py: stdin must be a JSON object of file texts\n")
        return 2
    sys.stdout.write(json.dumps(declared_layout(files)))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
