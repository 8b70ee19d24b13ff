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
std::deque<std::unique_ptr<Job>>* q_jobs = new std::deque<std::unique_ptr<Job>>;

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
  auto ev = std::make_unique<Event>(kInitError);
  ev->text = msg;
  Post(std::move(ev));
}

bool CallSys(const char* name, PyObject* arg) {
  PyObject* fn = PySys_GetObject(name);  // borrowed
  if (fn == nullptr) return false;
  return static_cast<bool>(PyRef(PyObject_CallOneArg(fn, arg)));
}

// Python-level SIGINT handler while Node keeps the OS-level one: PyErr_SetInterruptEx
// is a no-op without a Python handler, and install_signal_handlers=0 leaves none.
// `vis python` (keep_host false) hands SIGINT to Python at the OS level too, as python3
// does: a SIGINT the program sends itself must raise KeyboardInterrupt at once, not
// whenever Node's event loop gets to it.
bool InstallSigint(bool keep_host) {
  struct sigaction saved;
  sigaction(SIGINT, nullptr, &saved);
  PyRef signal_mod(PyImport_ImportModule("signal"));
  if (!signal_mod) return false;
  PyRef handler(SigintHandler());
  PyRef r(PyObject_CallMethod(signal_mod.get(), "signal", "iO", SIGINT, handler.get()));
  if (keep_host) sigaction(SIGINT, &saved, nullptr);
  return static_cast<bool>(r);
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
    auto ev = std::make_unique<Event>(kInitExit);
    ev->text = std::to_string(st.exitcode);
    Post(std::move(ev));
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
  PyRef flags(PyLong_FromLong(RTLD_NOW | RTLD_DEEPBIND));
  if (!flags || !CallSys("setdlopenflags", flags.get())) PyErr_Clear();
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
      PyRef entry(PyUnicode_DecodeFSDefault(p.c_str()));
      if (!entry || PyList_Insert(path, at++, entry.get()) != 0) PyErr_Clear();
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

// python3 >= 3.13 lets tracebacks show `-c` source lines through linecache; do the same.
void RegisterSource(const std::string& source, const std::string& file) {
  PyRef linecache(PyImport_ImportModule("linecache"));
  PyRef register_code(linecache ? PyObject_GetAttrString(linecache.get(), "_register_code") : nullptr);
  // Keyed by the file name, as python3 -c itself registers it (linecache.cache["<string>"]).
  if (register_code)
    PyRef(PyObject_CallFunction(register_code.get(), "sss", file.c_str(), source.c_str(), file.c_str()));
  PyErr_Clear();
}

// Runs one job with the GIL held; returns the outcome JSON.
std::string RunJob(const Job& job, int* status) {
  *status = 0;
  const uint64_t id = job.id;
  PyRef result;
  std::string value_json;  // raw JSON for "value", empty for none
  bool repr = false;
  std::string file = job.file.empty() ? "<block>" : job.file;
  switch (job.kind) {
    case kExec:
    case kMain:
    case kEval: {
      bool is_eval = job.kind == kEval;
      PyRef ns(Namespace(job.ns.c_str()));
      if (is_eval) file = "<eval>";
      if (job.kind == kMain && ns && file[0] != '<') {
        PyRef f(PyUnicode_DecodeFSDefault(file.c_str()));
        if (f) PyDict_SetItemString(ns.get(), "__file__", f.get());
        PyDict_SetItemString(ns.get(), "__cached__", Py_None);
      }
      PyRef code(ns ? Py_CompileStringExFlags(job.source.c_str(), file.c_str(), is_eval ? Py_eval_input : Py_file_input,
                                              nullptr, -1)
                    : nullptr);
      if (code && job.kind == kMain && file == "<string>") RegisterSource(job.source, file);
      if (code) result.Reset(PyEval_EvalCode(code.get(), ns.get(), ns.get()));
      if (result && is_eval) {
        PyRef text = Dumps(result.get());
        if (text) {
          Utf8(text.get(), &value_json);
        } else {
          PyErr_Clear();
          PyRef r(PyObject_Repr(result.get()));
          std::string s;
          if (r && Utf8(r.get(), &s)) {
            JsonQuote(&value_json, s);
            repr = true;
          } else {
            result.Reset();
          }
        }
      }
      break;
    }
    case kCompile:
      result.Reset(Py_CompileStringExFlags(job.source.c_str(), file.c_str(), Py_file_input, nullptr, -1));
      break;
    case kCall: {
      PyRef mod(PyImport_ImportModule(job.module.c_str()));
      PyRef fn(mod ? PyObject_GetAttrString(mod.get(), job.function.c_str()) : nullptr);
      PyObject* json = fn ? JsonModule() : nullptr;  // borrowed
      PyRef args(json ? PyObject_CallMethod(json, "loads", "s", job.args_json.c_str()) : nullptr);
      if (args && !PyList_Check(args.get())) {
        PyErr_SetString(PyExc_TypeError, "call(): argsJson must be a JSON array");
        args.Reset();
      }
      PyRef tuple(args ? PyList_AsTuple(args.get()) : nullptr);
      PyRef r(tuple ? PyObject_Call(fn.get(), tuple.get(), nullptr) : nullptr);
      PyRef text = r ? Dumps(r.get()) : PyRef();
      std::string s;
      if (text && Utf8(text.get(), &s)) {
        JsonQuote(&value_json, s);
        result = std::move(text);
      }
      break;
    }
    case kRunModule: result.Reset(RunModuleMain(job.module)); break;
    case kRepl: result.Reset(RunRepl(job.banner, job.startup)); break;
    case kFinalize:
    case kWire: break;
  }
  // The job's own code is done: from here an interrupt must not land, and a stale one
  // must not leak into the outcome building below or into the next job.
  PyRef type, value, tb;
  if (!result) {
    PyObject *raw_type = nullptr, *raw_value = nullptr, *raw_tb = nullptr;
    PyErr_Fetch(&raw_type, &raw_value, &raw_tb);
    PyErr_NormalizeException(&raw_type, &raw_value, &raw_tb);
    if (raw_tb != nullptr && raw_value != nullptr) PyException_SetTraceback(raw_value, raw_tb);
    type.Reset(raw_type);
    value.Reset(raw_value);
    tb.Reset(raw_tb);
  }
  g_current_job.store(0);
  PyOS_InterruptOccurred();
  std::string out;
  if (result) {
    out = "{\"job\":" + std::to_string(id) + ",\"ok\":true";
    if (!value_json.empty()) out += ",\"value\":" + value_json;
    if (repr) out += ",\"repr\":true";
    out += "}";
  } else if (!type) {
    out = "{\"job\":" + std::to_string(id) +
          ",\"ok\":false,\"error\":{\"type\":\"SystemError\",\"message\":\"job failed without an exception\","
          "\"traceback\":[]}}";
  } else {
    *status = PyErr_GivenExceptionMatches(type.get(), PyExc_KeyboardInterrupt) ? 130 : 1;
    if (PyErr_GivenExceptionMatches(type.get(), PyExc_SystemExit)) {
      std::string ignored;
      *status = ExitCodeOf(value.get(), &ignored);
    }
    if (job.kind == kMain || job.kind == kRunModule || job.kind == kRepl) {
      // Print it the way python3 does at top level (without PyErr_Print, which exits).
      if (PyErr_GivenExceptionMatches(type.get(), PyExc_SystemExit)) {
        std::string text;
        ExitCodeOf(value.get(), &text);
        if (!text.empty()) PySys_FormatStderr("%s\n", text.c_str());
      } else {
        PyObject* hook = PySys_GetObject("excepthook");  // borrowed
        PyRef r(hook ? PyObject_CallFunctionObjArgs(hook, type.get(), value.get(), tb ? tb.get() : Py_None, nullptr)
                     : nullptr);
        if (!r) {
          PyErr_Clear();
          PyErr_Display(type.get(), value.get(), tb.get());
        }
      }
      PyErr_Clear();
    }
    out = ErrorOutcome(id, type.get(), value.get(), tb.get(), file);
  }
  PyErr_Clear();
  return out;
}

void FlushStdio() {
  for (const char* name : {"stdout", "stderr"}) {
    PyObject* stream = PySys_GetObject(name);  // borrowed
    if (stream != nullptr && stream != Py_None) PyRef(PyObject_CallMethod(stream, "flush", nullptr));
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
  auto ready = std::make_unique<Event>(kReady);
  ready->text = Py_GetVersion();
  ready->detail = plan;
  Post(std::move(ready));
  // Let guest threads run while we wait for work.
  PyThreadState* ts = PyEval_SaveThread();
  for (;;) {
    std::unique_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lk(*q_mu);
      q_cv->wait(lk, [] { return !q_jobs->empty() || WireOn(); });
      if (!q_jobs->empty()) {
        job = std::move(q_jobs->front());
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
      auto ev = std::make_unique<Event>(kClosed);
      ev->job = job->id;
      ev->text = std::to_string(rc < 0 ? 120 : 0);
      Post(std::move(ev));
      return;
    }
    g_landed_job.store(0);
    if (job->kind == kWire) WireBegin(job->id);
    g_current_job.store(job->id);
    PyOS_InterruptOccurred();  // drop a stale interrupt that tripped between jobs
    OutputJobStart(job->id);
    if (job->kind == kWire) {
      WireGiveToken();
      std::string reply = WireRun(*job);
      g_current_job.store(0);
      PyOS_InterruptOccurred();
      if (!g_capture) FlushStdio();
      OutputJobEnd();  // the job's output reaches the socket before its reply
      // The reply goes out first: the host waits on it, the bookkeeping below need not.
      if (!reply.empty()) WireWrite(reply);
      WireEnd();
      HostCancelJob(job->id);
      ts = PyEval_SaveThread();
      continue;
    }
    WireGiveToken();
    int status = 0;
    std::string outcome = RunJob(*job, &status);
    if (!g_capture) FlushStdio();
    // A child of os.fork() has only this thread: nobody reads its events. It ends the
    // way python3's child does when its program ends: finalize (atexit), exit status.
    if (getpid() != g_pid) ExitForkedChild(status);
    OutputJobEnd();
    HostCancelJob(job->id);
    auto ev = std::make_unique<Event>(kResult);
    ev->job = job->id;
    ev->text = std::move(outcome);
    ts = PyEval_SaveThread();
    Post(std::move(ev));
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

void Enqueue(std::unique_ptr<Job> job) {
  {
    std::lock_guard<std::mutex> lk(*q_mu);
    q_jobs->push_back(std::move(job));
  }
  q_cv->notify_one();  // no syscall unless the thread sleeps on the queue (wire off)
}

void Submit(std::unique_ptr<Job> job) {
  Enqueue(std::move(job));
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
