// `vis python`'s command line is python3's: CPython parses it itself (parse_argv=1 on
// python3's default config), so -m/-c/-i/-u/-I/-E/-s/-S/-B/-O/-W/-X/-q/-V/-h, sys.flags,
// sys.orig_argv and sys.argv come out exactly as in python3. What Py_RunMain would then
// do (run the program, the REPL) happens as ordinary jobs the CLI submits: Py_RunMain
// ends SystemExit with exit() on the interpreter thread, which would tear Node down
// under its own feet.
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime.h"

namespace vis {

namespace {

std::string Wide(const wchar_t* w) {
  std::string out;
  if (w == nullptr) return out;
  PyRef s(PyUnicode_FromWideChar(w, -1));
  if (!s || !Utf8(s.get(), &out)) PyErr_Clear();
  return out;
}

void Field(std::string* out, const char* name, const wchar_t* w) {
  if (w == nullptr) return;
  *out += std::string(",\"") + name + "\":";
  JsonQuote(out, Wide(w));
}

// sys.path[0] as python3 computes it: the script's directory (symlinks resolved), the
// working directory for -m, '' otherwise; nothing under -I/-P (safe_path).
void InsertPath0(const PyConfig& c) {
  if (c.safe_path) return;
  std::string path0;
  if (c.run_filename != nullptr) {
    std::string file = Wide(c.run_filename);
    char buf[PATH_MAX];
    if (realpath(file.c_str(), buf) != nullptr) file = buf;
    size_t slash = file.rfind('/');
    path0 = slash == std::string::npos ? "" : (slash == 0 ? "/" : file.substr(0, slash));
  } else if (c.run_module != nullptr) {
    char buf[PATH_MAX];
    if (getcwd(buf, sizeof buf) != nullptr) path0 = buf;
  }
  PyObject* path = PySys_GetObject("path");  // borrowed
  PyRef entry(PyUnicode_DecodeFSDefault(path0.c_str()));
  if (path == nullptr || !entry || !PyList_Check(path) || PyList_Insert(path, 0, entry.get()) != 0) PyErr_Clear();
}

// Piped stdin: python3 writes the prompt to stderr and reads the line without readline.
PyObject* ReadPiped(PyObject*, PyObject* args) {
  PyObject* prompt = nullptr;
  if (!PyArg_ParseTuple(args, "|U", &prompt)) return nullptr;
  PyObject* err = PySys_GetObject("stderr");  // borrowed
  if (prompt != nullptr && err != nullptr && err != Py_None) {
    PyRef written(PyObject_CallMethod(err, "write", "O", prompt));
    PyRef flushed(written ? PyObject_CallMethod(err, "flush", nullptr) : nullptr);
    if (!flushed) return nullptr;
  }
  PyObject* in = PySys_GetObject("stdin");  // borrowed
  if (in == nullptr || in == Py_None) {
    PyErr_SetString(PyExc_RuntimeError, "lost sys.stdin");
    return nullptr;
  }
  PyRef line(PyObject_CallMethod(in, "readline", nullptr));
  if (!line) return nullptr;
  Py_ssize_t n = PyUnicode_Check(line.get()) ? PyUnicode_GetLength(line.get()) : -1;
  if (n == 0) {
    PyErr_SetNone(PyExc_EOFError);
    return nullptr;
  }
  if (n > 0 && PyUnicode_ReadChar(line.get(), n - 1) == '\n') return PyUnicode_Substring(line.get(), 0, n - 1);
  return line.Release();
}

PyMethodDef g_read_def = {"raw_input", ReadPiped, METH_VARARGS, nullptr};

}  // namespace

PyStatus CliPreInitialize(std::vector<char*>* argv) {
  PyPreConfig pre;
  PyPreConfig_InitPythonConfig(&pre);
  // -E/-I/-X utf8 are read here; locale coercion stays off: it would rewrite LC_CTYPE in
  // the host's environment.
  pre.parse_argv = 1;
  pre.coerce_c_locale = 0;
  return Py_PreInitializeFromBytesArgs(&pre, static_cast<Py_ssize_t>(argv->size()), argv->data());
}

void CliConfigInit(PyConfig* config) {
  PyConfig_InitPythonConfig(config);
  config->parse_argv = 1;
}

std::string CliPlan(const PyConfig& c) {
  InsertPath0(c);
  std::string out = "{\"inspect\":";
  out += c.inspect ? "true" : "false";
  out += ",\"quiet\":";
  out += c.quiet ? "true" : "false";
  Field(&out, "command", c.run_command);
  Field(&out, "module", c.run_module);
  Field(&out, "file", c.run_filename);
  out += "}";
  return out;
}

PyObject* RunModuleMain(const std::string& name) {
  PyRef runpy(PyImport_ImportModule("runpy"));
  if (!runpy) return nullptr;
  return PyObject_CallMethod(runpy.get(), "_run_module_as_main", "si", name.c_str(), 1);
}

namespace {

// $PYTHONSTARTUP in __main__, as python3 runs it before a REPL that has no program (not
// under -E/-I); an error in it is printed and the REPL still starts.
void RunStartup(PyObject* ns) {
  PyObject* flags = PySys_GetObject("flags");  // borrowed
  PyRef ignore(flags ? PyObject_GetAttrString(flags, "ignore_environment") : nullptr);
  bool ignored = !ignore || PyObject_IsTrue(ignore.get()) != 0;
  PyErr_Clear();
  const char* path = ignored ? nullptr : getenv("PYTHONSTARTUP");
  if (path == nullptr || *path == '\0') return;
  PyRef io(PyImport_ImportModule("io"));
  PyRef f(io ? PyObject_CallMethod(io.get(), "open_code", "s", path) : nullptr);
  PyRef src(f ? PyObject_CallMethod(f.get(), "read", nullptr) : nullptr);
  if (f) PyRef(PyObject_CallMethod(f.get(), "close", nullptr));
  PyRef code(src ? Py_CompileStringExFlags(PyBytes_AsString(src.get()), path, Py_file_input, nullptr, -1) : nullptr);
  PyRef r(code ? PyEval_EvalCode(code.get(), ns, ns) : nullptr);
  if (!r) {
    if (!f && PyErr_ExceptionMatches(PyExc_OSError)) PySys_WriteStderr("Could not open PYTHONSTARTUP\n");
    PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &value, &tb);
    if (type != nullptr) PyErr_NormalizeException(&type, &value, &tb);
    PyRef owned_type(type), owned_value(value), owned_tb(tb);
    if (type != nullptr) PyErr_Display(type, value, tb);
  }
}

}  // namespace

// python3's REPL: sys.__interactivehook__ (site's: readline line editing, completion,
// ~/.python_history), then read-eval-print in __main__ until EOF or SystemExit.
PyObject* RunRepl(bool banner, bool startup) {
  PyObject* hook = PySys_GetObject("__interactivehook__");  // borrowed
  if (hook != nullptr) {
    if (!PyRef(PyObject_CallNoArgs(hook))) {
      PySys_WriteStderr("Failed calling sys.__interactivehook__\n");
      PyErr_Clear();
    }
  }
  std::string text;
  if (banner) {
    text = std::string("Python ") + Py_GetVersion() + " on " + Py_GetPlatform() +
           "\nType \"help\", \"copyright\", \"credits\" or \"license\" for more information.";
  }
  PyObject* main = PyImport_AddModule("__main__");  // borrowed
  PyObject* ns = main ? PyModule_GetDict(main) : nullptr;
  if (ns != nullptr && startup) RunStartup(ns);
  // code.InteractiveConsole named "<stdin>" as python3's tracebacks name the REPL.
  PyRef code_mod(ns ? PyImport_ImportModule("code") : nullptr);
  PyRef console(code_mod ? PyObject_CallMethod(code_mod.get(), "InteractiveConsole", "Os", ns, "<stdin>") : nullptr);
  bool ok = static_cast<bool>(console);
  if (ok && !isatty(0)) {
    PyRef read(PyCFunction_New(&g_read_def, nullptr));
    ok = read && PyObject_SetAttrString(console.get(), "raw_input", read.get()) == 0;
  }
  return ok ? PyObject_CallMethod(console.get(), "interact", "ss", text.c_str(), "") : nullptr;
}

}  // namespace vis
