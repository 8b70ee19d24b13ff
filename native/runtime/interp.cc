// The interpreter thread: owns initialisation and runs every job. The first thread
// to touch the runtime becomes Python's main thread, so nothing Python-related ever
// runs on the JS thread.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "runtime.h"

namespace vis {

std::atomic<uint64_t> g_current_job{0};
std::atomic<uint64_t> g_interrupt_job{0};
std::atomic<uint64_t> g_landed_job{0};

namespace {

// Never freed: a static condition_variable deadlocked process.exit() in its destructor.
std::mutex* q_mu = new std::mutex;
std::condition_variable* q_cv = new std::condition_variable;
std::deque<Job*>* q_jobs = new std::deque<Job*>;

pthread_t g_thread;
std::atomic<bool> g_thread_ready{false};
int g_signal = 0;
bool g_capture = true;
std::atomic<int64_t> g_last_kick_ns{0};

pid_t g_pid = 0;  // the process that started the interpreter; another one is a fork child

[[noreturn]] void ExitForkedChild(int status) {
  int rc = Py_FinalizeEx();
  fflush(nullptr);
  // _exit: Node's atexit/static destructors belong to the parent's threads, absent here.
  _exit(rc < 0 && status == 0 ? 120 : status);
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Runs on the interpreter thread (pthread_kill targets it). PyErr_SetInterruptEx is
// async-signal-safe; it only trips a flag the eval loop and EINTR paths check.
void OnInterruptSignal(int) {
  if (InterruptPending()) PyErr_SetInterruptEx(SIGINT);
}

void Kick() {
  g_last_kick_ns.store(NowNs());
  pthread_kill(g_thread, g_signal);
}

std::string StatusText(const PyStatus& st) {
  std::string s;
  if (st.func) s += std::string(st.func) + ": ";
  s += st.err_msg ? st.err_msg : "initialisation failed";
  return s;
}

void PostInitError(const std::string& msg) {
  auto* ev = new Event{kInitError};
  ev->a = msg;
  Post(ev);
}

bool CallSys(const char* name, PyObject* arg) {
  PyObject* fn = PySys_GetObject(name);  // borrowed
  if (fn == nullptr) return false;
  PyObject* r = PyObject_CallOneArg(fn, arg);
  Py_XDECREF(r);
  return r != nullptr;
}

// Python-level SIGINT handler while Node keeps the OS-level one: PyErr_SetInterruptEx
// is a no-op without a Python handler, and install_signal_handlers=0 leaves none.
// `vis python` (keep_host false) hands SIGINT to Python at the OS level too, as python3
// does: a SIGINT the program sends itself must raise KeyboardInterrupt at once, not
// whenever Node's event loop gets to it.
bool InstallSigint(bool keep_host) {
  struct sigaction saved;
  sigaction(SIGINT, nullptr, &saved);
  PyObject* signal_mod = PyImport_ImportModule("signal");
  if (signal_mod == nullptr) return false;
  PyObject* handler = SigintHandler();
  PyObject* r = PyObject_CallMethod(signal_mod, "signal", "iO", SIGINT, handler);
  Py_XDECREF(handler);
  Py_DECREF(signal_mod);
  if (keep_host) sigaction(SIGINT, &saved, nullptr);
  Py_XDECREF(r);
  return r != nullptr;
}

bool Initialise(const StartOptions& o, std::string* err, std::string* plan) {
  if (o.audit) AuditInstall(o.readRoots, o.distRoot);
  if (PyImport_AppendInittab("_vis", PyInit__vis) != 0) {
    *err = "PyImport_AppendInittab(_vis) failed";
    return false;
  }
  // `vis python` passes python3's command line: argv[0] is the executable.
  std::vector<char*> argv;
  static char empty[] = "";
  if (o.cli) argv.push_back(const_cast<char*>(o.executable.c_str()));
  for (const auto& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  if (argv.empty()) argv.push_back(empty);
  PyStatus pst;
  if (o.cli) {
    pst = CliPreInitialize(&argv);
  } else {
    // Locale handling as python3's: UTF-8 mode when the locale is C/POSIX. No locale
    // coercion, which would rewrite LC_CTYPE in the host's environment.
    PyPreConfig pre;
    PyPreConfig_InitIsolatedConfig(&pre);
    pre.utf8_mode = -1;
    pre.configure_locale = 1;
    pre.coerce_c_locale = 0;
    pst = Py_PreInitialize(&pre);
  }
  if (PyStatus_Exception(pst)) {
    *err = StatusText(pst);
    return false;
  }
  PyConfig config;
  if (o.cli) {
    CliConfigInit(&config);
  } else {
    PyConfig_InitIsolatedConfig(&config);
    config.write_bytecode = 0;
    config.parse_argv = 0;
  }
  config.install_signal_handlers = 0;
  // Core phase first, so extension-module dlopen flags are set before site imports any.
  config._init_main = 0;
  // No home for a built checkout: getpath finds its stdlib from the executable.
  PyStatus st = o.home.empty() ? PyStatus_Ok() : PyConfig_SetBytesString(&config, &config.home, o.home.c_str());
  if (!PyStatus_Exception(st)) st = PyConfig_SetBytesString(&config, &config.executable, o.executable.c_str());
  if (!PyStatus_Exception(st)) st = PyConfig_SetBytesString(&config, &config.program_name, o.executable.c_str());
  if (!PyStatus_Exception(st)) st = PyConfig_SetBytesArgv(&config, static_cast<Py_ssize_t>(argv.size()), argv.data());
  // Parses the command line now (python3 prints -h/-V/usage errors here), so the plan
  // below can read run_command/run_module/run_filename.
  if (!PyStatus_Exception(st) && o.cli) st = PyConfig_Read(&config);
  if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
  if (PyStatus_IsExit(st)) {
    fflush(stdout);
    fflush(stderr);
    auto* ev = new Event{kInitExit};
    ev->a = std::to_string(st.exitcode);
    Post(ev);
    PyConfig_Clear(&config);
    *err = "";
    return false;
  }
  if (PyStatus_Exception(st)) {
    PyConfig_Clear(&config);
    *err = StatusText(st);
    return false;
  }
  // Node exports its own OpenSSL/zlib; DEEPBIND makes _ssl, _hashlib, zlib bind to theirs.
  PyObject* flags = PyLong_FromLong(RTLD_NOW | RTLD_DEEPBIND);
  bool ok = CallSys("setdlopenflags", flags);
  Py_DECREF(flags);
  if (!ok) PyErr_Clear();
  st = _Py_InitializeMain();
  // After site ran (as Py_RunMain does): site makes the entries then present absolute.
  if (!PyStatus_Exception(st) && o.cli) *plan = CliPlan(config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) {
    *err = StatusText(st);
    return false;
  }
  if (o.audit) AuditAfterInit();
  PyObject* path = PySys_GetObject("path");  // borrowed
  if (path != nullptr && PyList_Check(path)) {
    Py_ssize_t at = 0;
    for (const auto& p : o.sysPath) {
      PyObject* s = PyUnicode_DecodeFSDefault(p.c_str());
      if (s == nullptr || PyList_Insert(path, at++, s) != 0) PyErr_Clear();
      Py_XDECREF(s);
    }
  }
  if (o.capture && !InstallStreams()) {
    PyErr_Print();
    *err = "could not install the captured sys.stdout/sys.stderr";
    return false;
  }
  if (!InstallSigint(!o.cli)) {
    PyErr_Print();
    *err = "could not install the SIGINT handler";
    return false;
  }
  if (!SignalsInstall(g_signal, o.cli)) {
    PyErr_Print();
    *err = "could not install the signal forwarding";
    return false;
  }
  return true;
}

// ---- outcomes -----------------------------------------------------------------

std::string TypeName(PyObject* type) {
  std::string out = "Exception";
  PyObject* mod = PyObject_GetAttrString(type, "__module__");
  PyObject* qual = PyObject_GetAttrString(type, "__qualname__");
  std::string m, q;
  if (mod && PyUnicode_Check(mod)) Utf8(mod, &m);
  if (qual && PyUnicode_Check(qual)) Utf8(qual, &q);
  PyErr_Clear();
  Py_XDECREF(mod);
  Py_XDECREF(qual);
  if (!q.empty()) out = (m.empty() || m == "builtins" || m == "__main__") ? q : m + "." + q;
  return out;
}

std::string StrOf(PyObject* o) {
  std::string s;
  PyObject* str = PyObject_Str(o);
  if (str == nullptr || !Utf8(str, &s)) {
    PyErr_Clear();
    s = "<exception str() failed>";
  }
  Py_XDECREF(str);
  return s;
}

long IntAttr(PyObject* o, const char* name, bool* present) {
  PyObject* v = PyObject_GetAttrString(o, name);
  long r = 0;
  *present = false;
  if (v != nullptr && PyLong_Check(v)) {
    r = PyLong_AsLong(v);
    *present = !PyErr_Occurred();
  }
  PyErr_Clear();
  Py_XDECREF(v);
  return r;
}

std::string Formatted(PyObject* value) {
  std::string text;
  PyObject* tbmod = PyImport_ImportModule("traceback");
  PyObject* lines = tbmod ? PyObject_CallMethod(tbmod, "format_exception", "O", value) : nullptr;
  PyObject* empty = lines ? PyUnicode_FromString("") : nullptr;
  PyObject* joined = empty ? PyUnicode_Join(empty, lines) : nullptr;
  if (joined == nullptr || !Utf8(joined, &text)) text.clear();
  PyErr_Clear();
  Py_XDECREF(joined);
  Py_XDECREF(empty);
  Py_XDECREF(lines);
  Py_XDECREF(tbmod);
  return text;
}

int ExitCodeOf(PyObject* value, std::string* print) {
  PyObject* code = PyObject_GetAttrString(value, "code");
  int rc = 1;
  if (code == nullptr) {
    PyErr_Clear();
  } else if (code == Py_None) {
    rc = 0;
  } else if (PyLong_Check(code)) {
    rc = static_cast<int>(PyLong_AsLong(code));
    if (PyErr_Occurred()) {
      PyErr_Clear();
      rc = 1;
    }
  } else {
    *print = StrOf(code);
  }
  Py_XDECREF(code);
  return rc;
}

// Builds the error outcome from the fetched exception; guest line/column come from the
// deepest traceback frame that ran in the job's own file.
std::string ErrorOutcome(uint64_t job, PyObject* type, PyObject* value, PyObject* tb, const std::string& file) {
  std::string out = "{\"job\":" + std::to_string(job) + ",\"ok\":false,\"error\":{\"type\":";
  JsonQuote(&out, TypeName(type));
  out += ",\"message\":";
  bool is_syntax = PyErr_GivenExceptionMatches(type, PyExc_SyntaxError);
  if (is_syntax) {
    PyObject* msg = PyObject_GetAttrString(value, "msg");
    JsonQuote(&out, msg && msg != Py_None ? StrOf(msg) : StrOf(value));
    Py_XDECREF(msg);
    PyErr_Clear();
  } else {
    JsonQuote(&out, StrOf(value));
  }
  out += ",\"traceback\":[";
  long line = 0, col = 0;
  bool have_line = false;
  bool first = true;
  for (PyObject* t = tb; t != nullptr && t != Py_None;) {
    PyObject* frame = PyObject_GetAttrString(t, "tb_frame");
    bool has_lineno;
    long lineno = IntAttr(t, "tb_lineno", &has_lineno);
    bool has_lasti;
    long lasti = IntAttr(t, "tb_lasti", &has_lasti);
    if (frame != nullptr && PyFrame_Check(frame)) {
      PyCodeObject* code = PyFrame_GetCode(reinterpret_cast<PyFrameObject*>(frame));
      std::string fname, name;
      Utf8(code->co_filename, &fname);
      Utf8(code->co_name, &name);
      if (!first) out += ",";
      first = false;
      out += "{\"file\":";
      JsonQuote(&out, fname);
      out += ",\"line\":" + std::to_string(lineno) + ",\"name\":";
      JsonQuote(&out, name);
      out += "}";
      if (fname == file) {
        have_line = true;
        line = lineno;
        col = 0;
        int sl, sc, el, ec;
        if (has_lasti && PyCode_Addr2Location(code, static_cast<int>(lasti), &sl, &sc, &el, &ec) && sc >= 0)
          col = sc + 1;
      }
      Py_DECREF(code);
    }
    PyErr_Clear();
    Py_XDECREF(frame);
    PyObject* next = PyObject_GetAttrString(t, "tb_next");
    PyErr_Clear();
    if (t != tb) Py_DECREF(t);
    t = next;
    if (t == Py_None) {
      Py_DECREF(t);
      break;
    }
  }
  out += "]";
  if (is_syntax) {
    bool has;
    long l = IntAttr(value, "lineno", &has);
    if (has) {
      have_line = true;
      line = l;
    }
    long c = IntAttr(value, "offset", &has);
    col = has ? c : 0;
    PyObject* fn = PyObject_GetAttrString(value, "filename");
    if (fn && PyUnicode_Check(fn)) {
      std::string f;
      Utf8(fn, &f);
      out += ",\"filename\":";
      JsonQuote(&out, f);
    }
    PyErr_Clear();
    Py_XDECREF(fn);
  } else if (have_line) {
    out += ",\"filename\":";
    JsonQuote(&out, file);
  }
  if (have_line && line > 0) out += ",\"line\":" + std::to_string(line);
  if (have_line && col > 0) out += ",\"column\":" + std::to_string(col);
  if (PyErr_GivenExceptionMatches(type, PyExc_SystemExit)) {
    std::string ignored;
    out += ",\"exitCode\":" + std::to_string(ExitCodeOf(value, &ignored));
  }
  out += ",\"formatted\":";
  JsonQuote(&out, Formatted(value));
  out += "}}";
  return out;
}

PyObject* JsonModule() {
  static PyObject* json = nullptr;  // lives as long as the interpreter
  if (json == nullptr) json = PyImport_ImportModule("json");
  return json;
}

// json.dumps(v, allow_nan=False): JSON text, or nullptr with the error set.
PyObject* Dumps(PyObject* v) {
  PyObject* json = JsonModule();
  if (json == nullptr) return nullptr;
  PyObject* dumps = PyObject_GetAttrString(json, "dumps");
  if (dumps == nullptr) return nullptr;
  PyObject* args = PyTuple_Pack(1, v);
  PyObject* kw = Py_BuildValue("{s:O,s:O}", "allow_nan", Py_False, "ensure_ascii", Py_False);
  PyObject* r = (args && kw) ? PyObject_Call(dumps, args, kw) : nullptr;
  Py_XDECREF(kw);
  Py_XDECREF(args);
  Py_DECREF(dumps);
  return r;
}

// python3 >= 3.13 lets tracebacks show `-c` source lines through linecache; do the same.
void RegisterSource(const std::string& source, const std::string& file) {
  PyObject* linecache = PyImport_ImportModule("linecache");
  PyObject* reg = linecache ? PyObject_GetAttrString(linecache, "_register_code") : nullptr;
  // Keyed by the file name, as python3 -c itself registers it (linecache.cache["<string>"]).
  PyObject* r = reg ? PyObject_CallFunction(reg, "sss", file.c_str(), source.c_str(), file.c_str()) : nullptr;
  Py_XDECREF(r);
  Py_XDECREF(reg);
  Py_XDECREF(linecache);
  PyErr_Clear();
}

// Runs one job with the GIL held; returns the outcome JSON.
std::string RunJob(Job* job, int* status) {
  *status = 0;
  const uint64_t id = job->id;
  PyObject* result = nullptr;
  std::string value_json;  // raw JSON for "value", empty for none
  bool repr = false;
  std::string file = job->b.empty() ? "<block>" : job->b;
  switch (job->kind) {
    case kExec:
    case kMain:
    case kEval: {
      bool is_eval = job->kind == kEval;
      PyObject* ns = Namespace(is_eval ? job->b.c_str() : job->c.c_str());
      if (is_eval) file = "<eval>";
      if (job->kind == kMain && ns != nullptr && file[0] != '<') {
        PyObject* f = PyUnicode_DecodeFSDefault(file.c_str());
        if (f) PyDict_SetItemString(ns, "__file__", f);
        PyDict_SetItemString(ns, "__cached__", Py_None);
        Py_XDECREF(f);
      }
      PyObject* code = ns ? Py_CompileStringExFlags(job->a.c_str(), file.c_str(),
                                                    is_eval ? Py_eval_input : Py_file_input, nullptr, -1)
                          : nullptr;
      if (code != nullptr && job->kind == kMain && file == "<string>") RegisterSource(job->a, file);
      if (code != nullptr) result = PyEval_EvalCode(code, ns, ns);
      Py_XDECREF(code);
      Py_XDECREF(ns);
      if (result != nullptr && is_eval) {
        PyObject* text = Dumps(result);
        if (text != nullptr) {
          Utf8(text, &value_json);
          Py_DECREF(text);
        } else {
          PyErr_Clear();
          PyObject* r = PyObject_Repr(result);
          std::string s;
          if (r != nullptr && Utf8(r, &s)) {
            JsonQuote(&value_json, s);
            repr = true;
          } else {
            Py_CLEAR(result);
          }
          Py_XDECREF(r);
        }
      }
      break;
    }
    case kCompile: {
      PyObject* code = Py_CompileStringExFlags(job->a.c_str(), file.c_str(), Py_file_input, nullptr, -1);
      result = code;
      break;
    }
    case kCall: {
      PyObject* mod = PyImport_ImportModule(job->a.c_str());
      PyObject* fn = mod ? PyObject_GetAttrString(mod, job->b.c_str()) : nullptr;
      PyObject* json = fn ? JsonModule() : nullptr;
      PyObject* args = json ? PyObject_CallMethod(json, "loads", "s", job->c.c_str()) : nullptr;
      if (args != nullptr && !PyList_Check(args)) {
        PyErr_SetString(PyExc_TypeError, "call(): argsJson must be a JSON array");
        Py_CLEAR(args);
      }
      PyObject* tuple = args ? PyList_AsTuple(args) : nullptr;
      PyObject* r = tuple ? PyObject_Call(fn, tuple, nullptr) : nullptr;
      PyObject* text = r ? Dumps(r) : nullptr;
      std::string s;
      if (text != nullptr && Utf8(text, &s)) {
        JsonQuote(&value_json, s);
        result = text;
        text = nullptr;
      }
      Py_XDECREF(text);
      Py_XDECREF(r);
      Py_XDECREF(tuple);
      Py_XDECREF(args);
      Py_XDECREF(fn);
      Py_XDECREF(mod);
      break;
    }
    case kRunModule: result = RunModuleMain(job->a); break;
    case kRepl: result = RunRepl(job->a == "1", job->b == "1"); break;
    case kFinalize:
    case kWire: break;
  }
  // The job's own code is done: from here an interrupt must not land, and a stale one
  // must not leak into the outcome building below or into the next job.
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  if (result == nullptr) {
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != nullptr && value != nullptr) PyException_SetTraceback(value, tb);
  }
  g_current_job.store(0);
  PyOS_InterruptOccurred();
  std::string out;
  if (result != nullptr) {
    out = "{\"job\":" + std::to_string(id) + ",\"ok\":true";
    if (!value_json.empty()) out += ",\"value\":" + value_json;
    if (repr) out += ",\"repr\":true";
    out += "}";
    Py_DECREF(result);
  } else if (type == nullptr) {
    out = "{\"job\":" + std::to_string(id) +
          ",\"ok\":false,\"error\":{\"type\":\"SystemError\",\"message\":\"job failed without an exception\","
          "\"traceback\":[]}}";
  } else {
    *status = PyErr_GivenExceptionMatches(type, PyExc_KeyboardInterrupt) ? 130 : 1;
    if (PyErr_GivenExceptionMatches(type, PyExc_SystemExit)) {
      std::string ignored;
      *status = ExitCodeOf(value, &ignored);
    }
    if (job->kind == kMain || job->kind == kRunModule || job->kind == kRepl) {
      // Print it the way python3 does at top level (without PyErr_Print, which exits).
      if (PyErr_GivenExceptionMatches(type, PyExc_SystemExit)) {
        std::string text;
        ExitCodeOf(value, &text);
        if (!text.empty()) PySys_FormatStderr("%s\n", text.c_str());
      } else {
        PyObject* hook = PySys_GetObject("excepthook");
        PyObject* r = hook ? PyObject_CallFunctionObjArgs(hook, type, value, tb ? tb : Py_None, nullptr) : nullptr;
        if (r == nullptr) {
          PyErr_Clear();
          PyErr_Display(type, value, tb);
        }
        Py_XDECREF(r);
      }
      PyErr_Clear();
    }
    out = ErrorOutcome(id, type, value, tb, file);
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  PyErr_Clear();
  return out;
}

void FlushStdio() {
  for (const char* name : {"stdout", "stderr"}) {
    PyObject* s = PySys_GetObject(name);
    if (s != nullptr && s != Py_None) {
      PyObject* r = PyObject_CallMethod(s, "flush", nullptr);
      Py_XDECREF(r);
    }
    PyErr_Clear();
  }
}

void ThreadMain(StartOptions opts) {
  // The interrupt signal must reach this thread even if the creator blocked it.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, g_signal);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  std::string err, plan;
  if (!Initialise(opts, &err, &plan)) {
    if (!err.empty()) PostInitError(err);
    return;
  }
  auto* ready = new Event{kReady};
  ready->a = Py_GetVersion();
  ready->b = plan;
  Post(ready);
  // Let guest threads run while we wait for work.
  PyThreadState* ts = PyEval_SaveThread();
  for (;;) {
    Job* job = nullptr;
    {
      std::unique_lock<std::mutex> lk(*q_mu);
      q_cv->wait(lk, [] { return !q_jobs->empty() || WireOn(); });
      if (!q_jobs->empty()) {
        job = q_jobs->front();
        q_jobs->pop_front();
      }
    }
    if (job == nullptr) {
      // Wire mode: rather than sleep on the queue, read the socket (see wire.cc).
      WireIdle(true);
      continue;
    }
    PyEval_RestoreThread(ts);
    if (job->kind == kFinalize) {
      FlushStdio();
      OutputFlush();
      int rc = Py_FinalizeEx();
      OutputFlush();
      auto* ev = new Event{kClosed};
      ev->job = job->id;
      ev->a = std::to_string(rc < 0 ? 120 : 0);
      delete job;
      Post(ev);
      return;
    }
    g_landed_job.store(0);
    if (job->kind == kWire) WireBegin(job->id);
    g_current_job.store(job->id);
    PyOS_InterruptOccurred();  // drop a stale interrupt that tripped between jobs
    OutputJobStart(job->id);
    if (job->kind == kWire) {
      WireGiveToken();
      std::string reply = WireRun(job);
      g_current_job.store(0);
      PyOS_InterruptOccurred();
      if (!g_capture) FlushStdio();
      OutputJobEnd();  // the job's output reaches the socket before its reply
      // The reply goes out first: the host waits on it, the bookkeeping below need not.
      if (!reply.empty()) WireWrite(reply);
      WireEnd();
      HostCancelJob(job->id);
      delete job;
      ts = PyEval_SaveThread();
      continue;
    }
    WireGiveToken();
    int status = 0;
    std::string outcome = RunJob(job, &status);
    if (!g_capture) FlushStdio();
    // A child of os.fork() has only this thread: nobody reads its events. It ends the
    // way python3's child does when its program ends: finalize (atexit), exit status.
    if (getpid() != g_pid) ExitForkedChild(status);
    OutputJobEnd();
    HostCancelJob(job->id);
    auto* ev = new Event{kResult};
    ev->job = job->id;
    ev->a = std::move(outcome);
    delete job;
    ts = PyEval_SaveThread();
    Post(ev);
  }
}

}  // namespace

bool OnPythonThread() { return g_thread_ready.load() && pthread_equal(pthread_self(), g_thread); }

void StartInterpreter(const StartOptions& opts) {
  g_signal = opts.interruptSignal > 0 ? opts.interruptSignal : SIGRTMIN + 3;
  g_pid = getpid();
  g_capture = opts.capture;
  struct sigaction sa = {};
  sa.sa_handler = OnInterruptSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking syscalls must return EINTR
  sigaction(g_signal, &sa, nullptr);
  TickerStart();
  std::thread t([opts] { ThreadMain(opts); });
  g_thread = t.native_handle();
  g_thread_ready.store(true);
  t.detach();
}

void Enqueue(Job* job) {
  {
    std::lock_guard<std::mutex> lk(*q_mu);
    q_jobs->push_back(job);
  }
  q_cv->notify_one();  // no syscall unless the thread sleeps on the queue (wire off)
}

void Submit(Job* job) {
  Enqueue(job);
  WireWake();
}

bool QueueEmpty() {
  std::lock_guard<std::mutex> lk(*q_mu);
  return q_jobs->empty();
}

void WakeQueue() {
  { std::lock_guard<std::mutex> lk(*q_mu); }
  q_cv->notify_all();
}

bool Interrupt(uint64_t job) {
  uint64_t cur = g_current_job.load();
  if (cur == 0 || (job != 0 && job != cur)) return false;
  g_interrupt_job.store(cur);
  Kick();
  HostWakeAll();
  StdinWakeAll();
  TickerWake();
  return true;
}

bool InterruptTick() {
  if (!InterruptPending()) return false;
  if (NowNs() - g_last_kick_ns.load() >= 20000000) Kick();
  return true;
}

}  // namespace vis
