// What a job answers: its value as JSON text, or its exception as the error outcome (type,
// message, the traceback's frames, the guest's line and column, python3's formatted text).
// Interpreter thread, GIL held.
#include <string>

#include "runtime.h"

namespace vis {

namespace {

std::string TypeName(PyObject* type) {
  std::string out = "Exception";
  PyRef mod(PyObject_GetAttrString(type, "__module__"));
  PyRef qual(PyObject_GetAttrString(type, "__qualname__"));
  std::string module_name, qualname;
  if (mod && PyUnicode_Check(mod.get())) Utf8(mod.get(), &module_name);
  if (qual && PyUnicode_Check(qual.get())) Utf8(qual.get(), &qualname);
  PyErr_Clear();
  if (!qualname.empty())
    out = (module_name.empty() || module_name == "builtins" || module_name == "__main__")
              ? qualname
              : module_name + "." + qualname;
  return out;
}

std::string StrOf(PyObject* o) {
  std::string s;
  PyRef str(PyObject_Str(o));
  if (!str || !Utf8(str.get(), &s)) {
    PyErr_Clear();
    s = "<exception str() failed>";
  }
  return s;
}

long IntAttr(PyObject* o, const char* name, bool* present) {
  PyRef v(PyObject_GetAttrString(o, name));
  long r = 0;
  *present = false;
  if (v && PyLong_Check(v.get())) {
    r = PyLong_AsLong(v.get());
    *present = !PyErr_Occurred();
  }
  PyErr_Clear();
  return r;
}

std::string Formatted(PyObject* value) {
  std::string text;
  PyRef traceback_mod(PyImport_ImportModule("traceback"));
  PyRef lines(traceback_mod ? PyObject_CallMethod(traceback_mod.get(), "format_exception", "O", value) : nullptr);
  PyRef empty(lines ? PyUnicode_FromString("") : nullptr);
  PyRef joined(empty ? PyUnicode_Join(empty.get(), lines.get()) : nullptr);
  if (!joined || !Utf8(joined.get(), &text)) text.clear();
  PyErr_Clear();
  return text;
}

// The traceback's frames as JSON objects; *line/*column: the deepest frame that ran in the
// job's own file (column 1-based, 0 when unknown).
void TracebackFrames(PyObject* tb, const std::string& file, std::string* out, bool* have_line, long* line,
                     long* column) {
  bool first = true;
  for (PyRef t = PyRef::Borrow(tb); t && t.get() != Py_None;) {
    PyRef frame(PyObject_GetAttrString(t.get(), "tb_frame"));
    bool has_lineno;
    long lineno = IntAttr(t.get(), "tb_lineno", &has_lineno);
    bool has_lasti;
    long lasti = IntAttr(t.get(), "tb_lasti", &has_lasti);
    if (frame && PyFrame_Check(frame.get())) {
      PyCodeObject* code = PyFrame_GetCode(reinterpret_cast<PyFrameObject*>(frame.get()));
      PyRef code_ref(reinterpret_cast<PyObject*>(code));
      std::string fname, name;
      Utf8(code->co_filename, &fname);
      Utf8(code->co_name, &name);
      if (!first) *out += ",";
      first = false;
      *out += "{\"file\":";
      JsonQuote(out, fname);
      *out += ",\"line\":" + std::to_string(lineno) + ",\"name\":";
      JsonQuote(out, name);
      *out += "}";
      if (fname == file) {
        *have_line = true;
        *line = lineno;
        *column = 0;
        int start_line, start_col, end_line, end_col;
        if (has_lasti &&
            PyCode_Addr2Location(code, static_cast<int>(lasti), &start_line, &start_col, &end_line, &end_col) &&
            start_col >= 0)
          *column = start_col + 1;
      }
    }
    PyErr_Clear();
    PyRef next(PyObject_GetAttrString(t.get(), "tb_next"));
    PyErr_Clear();
    t = std::move(next);
  }
}

}  // namespace

PyObject* JsonModule() {
  static PyObject* json = nullptr;  // one reference, kept as long as the interpreter lives
  if (json == nullptr) json = PyImport_ImportModule("json");
  return json;
}

PyRef Dumps(PyObject* v) {
  PyObject* json = JsonModule();
  if (json == nullptr) return PyRef();
  PyRef dumps(PyObject_GetAttrString(json, "dumps"));
  if (!dumps) return PyRef();
  PyRef args(PyTuple_Pack(1, v));
  PyRef kw(Py_BuildValue("{s:O,s:O}", "allow_nan", Py_False, "ensure_ascii", Py_False));
  return PyRef(args && kw ? PyObject_Call(dumps.get(), args.get(), kw.get()) : nullptr);
}

int ExitCodeOf(PyObject* value, std::string* print) {
  PyRef code(PyObject_GetAttrString(value, "code"));
  int rc = 1;
  if (!code) {
    PyErr_Clear();
  } else if (code.get() == Py_None) {
    rc = 0;
  } else if (PyLong_Check(code.get())) {
    rc = static_cast<int>(PyLong_AsLong(code.get()));
    if (PyErr_Occurred()) {
      PyErr_Clear();
      rc = 1;
    }
  } else {
    *print = StrOf(code.get());
  }
  return rc;
}

std::string ErrorOutcome(uint64_t job, PyObject* type, PyObject* value, PyObject* tb, const std::string& file) {
  std::string out = "{\"job\":" + std::to_string(job) + ",\"ok\":false,\"error\":{\"type\":";
  JsonQuote(&out, TypeName(type));
  out += ",\"message\":";
  bool is_syntax = PyErr_GivenExceptionMatches(type, PyExc_SyntaxError);
  if (is_syntax) {
    PyRef msg(PyObject_GetAttrString(value, "msg"));
    JsonQuote(&out, msg && msg.get() != Py_None ? StrOf(msg.get()) : StrOf(value));
    PyErr_Clear();
  } else {
    JsonQuote(&out, StrOf(value));
  }
  out += ",\"traceback\":[";
  long line = 0, column = 0;
  bool have_line = false;
  TracebackFrames(tb, file, &out, &have_line, &line, &column);
  out += "]";
  if (is_syntax) {
    bool has;
    long l = IntAttr(value, "lineno", &has);
    if (has) {
      have_line = true;
      line = l;
    }
    long c = IntAttr(value, "offset", &has);
    column = has ? c : 0;
    PyRef filename(PyObject_GetAttrString(value, "filename"));
    if (filename && PyUnicode_Check(filename.get())) {
      std::string f;
      Utf8(filename.get(), &f);
      out += ",\"filename\":";
      JsonQuote(&out, f);
    }
    PyErr_Clear();
  } else if (have_line) {
    out += ",\"filename\":";
    JsonQuote(&out, file);
  }
  if (have_line && line > 0) out += ",\"line\":" + std::to_string(line);
  if (have_line && column > 0) out += ",\"column\":" + std::to_string(column);
  if (PyErr_GivenExceptionMatches(type, PyExc_SystemExit)) {
    std::string ignored;
    out += ",\"exitCode\":" + std::to_string(ExitCodeOf(value, &ignored));
  }
  out += ",\"formatted\":";
  JsonQuote(&out, Formatted(value));
  out += "}}";
  return out;
}

}  // namespace vis
