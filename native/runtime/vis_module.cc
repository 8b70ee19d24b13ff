// The _vis builtin module: the guest's only door to the host (host calls and
// captured output), plus the namespaces jobs run in.
#include <cstring>

#include "runtime.h"

namespace vis {

bool Utf8(PyObject* s, std::string* out) {
  Py_ssize_t n;
  const char* p = PyUnicode_AsUTF8AndSize(s, &n);
  if (p != nullptr) {
    out->assign(p, static_cast<size_t>(n));
    return true;
  }
  PyErr_Clear();
  PyRef encoded(PyUnicode_AsEncodedString(s, "utf-8", "replace"));
  if (!encoded) return false;
  out->assign(PyBytes_AS_STRING(encoded.get()), static_cast<size_t>(PyBytes_GET_SIZE(encoded.get())));
  return true;
}

namespace {

PyObject* g_namespaces = nullptr;  // name -> dict, for names that are not modules
// _vis.HostCallTooLarge (a ValueError): a call over the wire's limits, refused unsent.
PyObject* g_too_large = nullptr;

// Starts a call; false, with the exception set, when it was refused before sending.
bool Send(const std::string& name, const std::string& args, uint64_t* id) {
  std::string refused;
  *id = HostSend(name, args, &refused);
  if (*id != 0) return true;
  PyErr_SetString(g_too_large != nullptr ? g_too_large : PyExc_ValueError, refused.c_str());
  return false;
}

bool ParseIds(PyObject* seq, std::vector<uint64_t>* ids) {
  PyRef fast(PySequence_Fast(seq, "host_wait() takes a list of call ids"));
  if (!fast) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.get());
  for (Py_ssize_t i = 0; i < n; i++) {
    unsigned long long v = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(fast.get(), i));
    if (PyErr_Occurred()) return false;
    ids->push_back(v);
  }
  if (ids->empty()) {
    PyErr_SetString(PyExc_ValueError, "host_wait() needs at least one call id");
    return false;
  }
  return true;
}

PyObject* Wait(const std::vector<uint64_t>& ids) {
  uint64_t which = 0;
  std::string reply;
  int rc;
  bool interruptible = OnPythonThread();
  Py_BEGIN_ALLOW_THREADS;
  rc = HostWait(ids, interruptible, &which, &reply);
  Py_END_ALLOW_THREADS;
  if (rc == -1) {
    PyErr_SetString(PyExc_ValueError, "host_wait(): unknown or already settled call id");
    return nullptr;
  }
  if (rc == 1) {
    g_landed_job.store(g_interrupt_job.load());
    PyOS_InterruptOccurred();  // the signal may have tripped too; raise once
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    return nullptr;
  }
  return Py_BuildValue("(Ks#)", static_cast<unsigned long long>(which), reply.data(),
                       static_cast<Py_ssize_t>(reply.size()));
}

PyObject* vis_host_send(PyObject*, PyObject* args) {
  PyObject *name, *payload;
  if (!PyArg_ParseTuple(args, "UU:host_send", &name, &payload)) return nullptr;
  std::string n, p;
  if (!Utf8(name, &n) || !Utf8(payload, &p)) return nullptr;
  uint64_t id;
  if (!Send(n, p, &id)) return nullptr;
  return PyLong_FromUnsignedLongLong(id);
}

PyObject* vis_host_wait(PyObject*, PyObject* arg) {
  std::vector<uint64_t> ids;
  if (!ParseIds(arg, &ids)) return nullptr;
  return Wait(ids);
}

PyObject* vis_host_call(PyObject*, PyObject* args) {
  PyObject *name, *payload;
  if (!PyArg_ParseTuple(args, "UU:host_call", &name, &payload)) return nullptr;
  std::string n, p;
  if (!Utf8(name, &n) || !Utf8(payload, &p)) return nullptr;
  uint64_t id;
  if (!Send(n, p, &id)) return nullptr;
  PyRef r(Wait({id}));
  if (!r) return nullptr;
  return PyRef::Borrow(PyTuple_GetItem(r.get(), 1)).Release();
}

PyObject* Write(int stream, PyObject* text) {
  if (!PyUnicode_Check(text)) {
    PyErr_Format(PyExc_TypeError, "write() argument must be str, not %.100s", Py_TYPE(text)->tp_name);
    return nullptr;
  }
  std::string s;
  if (!Utf8(text, &s)) return nullptr;
  if (!s.empty()) OutputWrite(stream, s.data(), s.size());
  return PyLong_FromSsize_t(PyUnicode_GetLength(text));
}

PyObject* vis_write(PyObject*, PyObject* args) {
  int stream;
  PyObject* text;
  if (!PyArg_ParseTuple(args, "iO:write", &stream, &text)) return nullptr;
  if (stream != 1 && stream != 2) {
    PyErr_SetString(PyExc_ValueError, "write(): stream is 1 (stdout) or 2 (stderr)");
    return nullptr;
  }
  return Write(stream, text);
}

PyObject* vis_namespace(PyObject*, PyObject* arg) {
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "namespace(name: str)");
    return nullptr;
  }
  return Namespace(PyUnicode_AsUTF8(arg));
}

PyObject* vis_current_job(PyObject*, PyObject*) { return PyLong_FromUnsignedLongLong(g_current_job.load()); }

// json_quote(s) -> the JSON string literal of s, as json.dumps(s, ensure_ascii=False)
// writes it, but without walking it a character at a time. A str with lone surrogates
// raises UnicodeEncodeError (it has no UTF-8 form to put on the wire).
PyObject* vis_json_quote(PyObject*, PyObject* s) {
  if (!PyUnicode_Check(s)) {
    PyErr_SetString(PyExc_TypeError, "json_quote() takes a str");
    return nullptr;
  }
  Py_ssize_t n;
  const char* p = PyUnicode_AsUTF8AndSize(s, &n);
  if (p == nullptr) return nullptr;
  std::string out;
  JsonQuoteBytes(&out, p, static_cast<size_t>(n));
  return PyUnicode_DecodeUTF8(out.data(), static_cast<Py_ssize_t>(out.size()), "strict");
}

// The next `stdin` request line the host sent for the running block (the guest decodes
// it), or None when no block can receive input. An interrupt raises KeyboardInterrupt.
PyObject* vis_stdin_read(PyObject*, PyObject*) {
  std::string line;
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = StdinWait(&line);
  Py_END_ALLOW_THREADS;
  if (rc == 1) {
    g_landed_job.store(g_interrupt_job.load());
    PyOS_InterruptOccurred();
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    return nullptr;
  }
  if (rc == 2) Py_RETURN_NONE;
  return PyUnicode_DecodeUTF8(line.data(), static_cast<Py_ssize_t>(line.size()), "replace");
}

PyObject* vis_sigint(PyObject*, PyObject*) {
  uint64_t t = g_interrupt_job.load();
  if (t != 0) g_landed_job.store(t);
  PyErr_SetNone(PyExc_KeyboardInterrupt);
  return nullptr;
}

PyMethodDef kMethods[] = {
    {"host_send", vis_host_send, METH_VARARGS, "host_send(name, args_json) -> call id"},
    {"host_wait", vis_host_wait, METH_O, "host_wait(ids) -> (call id, reply json); GIL released"},
    {"host_call", vis_host_call, METH_VARARGS, "host_call(name, args_json) -> reply json"},
    {"write", vis_write, METH_VARARGS, "write(stream, text): 1 stdout, 2 stderr"},
    {"namespace", vis_namespace, METH_O, "namespace(name) -> the dict jobs with that ns run in"},
    {"current_job", vis_current_job, METH_NOARGS, "id of the running job, 0 when idle"},
    {"json_quote", vis_json_quote, METH_O, "json_quote(s) -> s as a JSON string literal"},
    {"stdin_read", vis_stdin_read, METH_NOARGS, "stdin_read() -> next stdin request line, None: no more"},
    {"_sigint", vis_sigint, METH_VARARGS, "SIGINT handler: raises KeyboardInterrupt"},
    {"dict_version", VisDictVersion, METH_O, "dict_version(d) -> changes whenever d is modified (None: unknown)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_vis", "The guest's door to the host.", -1, kMethods};

// ---- the captured sys.stdout / sys.stderr ----------------------------------

struct StreamObject {
  PyObject_HEAD int stream;
};

PyObject* stream_write(PyObject* self, PyObject* text) {
  return Write(reinterpret_cast<StreamObject*>(self)->stream, text);
}

PyObject* stream_writelines(PyObject* self, PyObject* lines) {
  PyRef it(PyObject_GetIter(lines));
  if (!it) return nullptr;
  while (PyRef line{PyIter_Next(it.get())}) {
    if (!PyRef(stream_write(self, line.get()))) return nullptr;
  }
  if (PyErr_Occurred()) return nullptr;
  Py_RETURN_NONE;
}

PyObject* stream_flush(PyObject*, PyObject*) {
  OutputFlush();
  Py_RETURN_NONE;
}

// Like a pipe-less text stream: pytest's faulthandler expects UnsupportedOperation here.
PyObject* stream_fileno(PyObject*, PyObject*) {
  PyRef io(PyImport_ImportModule("io"));
  if (!io) return nullptr;
  PyRef unsupported(PyObject_GetAttrString(io.get(), "UnsupportedOperation"));
  if (unsupported) PyErr_SetString(unsupported.get(), "fileno");
  return nullptr;
}

PyObject* stream_false(PyObject*, PyObject*) { Py_RETURN_FALSE; }
PyObject* stream_true(PyObject*, PyObject*) { Py_RETURN_TRUE; }

PyObject* stream_get_name(PyObject* self, void*) {
  return PyUnicode_FromString(reinterpret_cast<StreamObject*>(self)->stream == 1 ? "<stdout>" : "<stderr>");
}
PyObject* stream_get_encoding(PyObject*, void*) { return PyUnicode_FromString("utf-8"); }
PyObject* stream_get_errors(PyObject*, void*) { return PyUnicode_FromString("replace"); }
PyObject* stream_get_false(PyObject*, void*) { Py_RETURN_FALSE; }
PyObject* stream_get_none(PyObject*, void*) { Py_RETURN_NONE; }
PyObject* stream_get_mode(PyObject*, void*) { return PyUnicode_FromString("w"); }

// One method a row: kept as written.
// clang-format off
PyMethodDef kStreamMethods[] = {
    {"write", stream_write, METH_O, nullptr},
    {"writelines", stream_writelines, METH_O, nullptr},
    {"flush", stream_flush, METH_NOARGS, nullptr},
    {"fileno", stream_fileno, METH_NOARGS, nullptr},
    {"isatty", stream_false, METH_NOARGS, nullptr},
    {"readable", stream_false, METH_NOARGS, nullptr},
    {"seekable", stream_false, METH_NOARGS, nullptr},
    {"writable", stream_true, METH_NOARGS, nullptr},
    {"close", stream_flush, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};
// clang-format on

PyGetSetDef kStreamGetSet[] = {{"name", stream_get_name, nullptr, nullptr, nullptr},
                               {"encoding", stream_get_encoding, nullptr, nullptr, nullptr},
                               {"errors", stream_get_errors, nullptr, nullptr, nullptr},
                               {"closed", stream_get_false, nullptr, nullptr, nullptr},
                               {"line_buffering", stream_get_false, nullptr, nullptr, nullptr},
                               {"newlines", stream_get_none, nullptr, nullptr, nullptr},
                               {"mode", stream_get_mode, nullptr, nullptr, nullptr},
                               {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kStreamSlots[] = {{Py_tp_methods, kStreamMethods},
                              {Py_tp_getset, kStreamGetSet},
                              {Py_tp_doc, const_cast<char*>("Text stream captured by the host.")},
                              {0, nullptr}};

PyType_Spec kStreamSpec = {"_vis.Stream", sizeof(StreamObject), 0, Py_TPFLAGS_DEFAULT, kStreamSlots};

PyObject* g_stream_type = nullptr;

}  // namespace

PyObject* PyInit__vis() {
  PyRef m(PyModule_Create(&kModule));
  if (!m) return nullptr;
  g_stream_type = PyType_FromSpec(&kStreamSpec);  // kept for the interpreter's life
  if (g_stream_type == nullptr || PyModule_AddObjectRef(m.get(), "Stream", g_stream_type) != 0) return nullptr;
  if (g_too_large == nullptr) {
    g_too_large = PyErr_NewExceptionWithDoc("_vis.HostCallTooLarge",
                                            "A host call over the wire's size or depth cap; it was not sent.",
                                            PyExc_ValueError, nullptr);
  }
  if (g_too_large == nullptr || PyModule_AddObjectRef(m.get(), "HostCallTooLarge", g_too_large) != 0) return nullptr;
  return m.Release();
}

PyObject* Namespace(const char* name) {
  PyObject* modules = PyImport_GetModuleDict();
  PyObject* mod = PyDict_GetItemString(modules, name);  // borrowed
  if (strcmp(name, "__main__") == 0 && mod == nullptr) mod = PyImport_AddModule("__main__");
  if (mod != nullptr && PyModule_Check(mod)) return PyRef::Borrow(PyModule_GetDict(mod)).Release();
  // Kept for the interpreter's life.
  if (g_namespaces == nullptr && (g_namespaces = PyDict_New()) == nullptr) return nullptr;
  PyObject* existing = PyDict_GetItemString(g_namespaces, name);  // borrowed
  if (existing != nullptr) return PyRef::Borrow(existing).Release();
  PyRef d(PyDict_New());
  PyRef n(PyUnicode_FromString(name));
  if (!d || !n || PyDict_SetItemString(d.get(), "__name__", n.get()) != 0 ||
      PyDict_SetItemString(d.get(), "__builtins__", PyEval_GetBuiltins()) != 0 ||
      PyDict_SetItemString(g_namespaces, name, d.get()) != 0)
    return nullptr;
  return d.Release();
}

bool InstallStreams() {
  if (!PyRef(PyImport_ImportModule("_vis"))) return false;
  for (int stream : {1, 2}) {
    auto* s = PyObject_New(StreamObject, reinterpret_cast<PyTypeObject*>(g_stream_type));
    if (s == nullptr) return false;
    s->stream = stream;
    PyRef owned(reinterpret_cast<PyObject*>(s));
    if (PySys_SetObject(stream == 1 ? "stdout" : "stderr", owned.get()) != 0) return false;
  }
  return true;
}

PyObject* SigintHandler() {
  PyRef mod(PyImport_ImportModule("_vis"));
  return mod ? PyObject_GetAttrString(mod.get(), "_sigint") : nullptr;
}

}  // namespace vis
