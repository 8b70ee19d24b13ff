// Shared declarations of the per-minor runtime addon. One embedded interpreter per
// process: its state is process-global, heap-allocated where a destructor could
// run during exit() while the interpreter thread still holds it.
#pragma once
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pyref.h"

namespace vis {

// ---- events to JS (addon.cc) -------------------------------------------------
enum EventKind : int {
  kReady = 1,
  kInitError = 2,
  kResult = 3,
  kOutput = 4,
  kHostCall = 5,
  kHostCancel = 6,
  kClosed = 7,
  kWireMessage = 8,
  kWireClosed = 9,
  kInitExit = 10,  // the command line ended start-up (-h, -V, a usage error): a = exit status
};

struct Chunk {
  int stream;  // 1 stdout, 2 stderr
  std::string text;
};

// Made on the thread where something happened, owned by a unique_ptr until the JS thread
// takes it (the thread-safe function carries the raw pointer across; CallJs owns it again).
struct Event {
  explicit Event(EventKind k) : kind(k) {}
  EventKind kind;
  uint64_t job = 0;
  uint64_t call = 0;
  // kResult: the outcome JSON; kHostCall: the tool's name; kWireMessage: the line; kReady:
  // Python's version; kInitError: the message; kClosed, kInitExit: the exit status.
  std::string text;
  // kHostCall: the arguments' JSON; kReady: the command line's plan (`vis python`).
  std::string detail;
  std::vector<Chunk> chunks;  // kOutput
};

// Queues ev for the JS thread; dropped once the function is closing.
void Post(std::unique_ptr<Event> ev);

// ---- the interpreter thread (interp.cc) -------------------------------------
enum JobKind : int {
  kExec = 1,
  kEval = 2,
  kCompile = 3,
  kCall = 4,
  kMain = 5,
  kFinalize = 6,
  kWire = 7,
  kRunModule = 8,  // runpy as `python3 -m a`: a = module name
  kRepl = 9,       // the interactive loop in __main__: a = "1" python3's banner, b = "1" run PYTHONSTARTUP
};

// One unit of work for the interpreter thread. Owned by a unique_ptr from the thread that
// makes it (JS, or the wire reader) through the queue to the interpreter thread, which drops it.
struct Job {
  JobKind kind;
  uint64_t id;
  // kExec, kMain, kCompile: the code; kEval: the expression; kWire: the request line.
  std::string source;
  // kExec, kMain, kCompile: the file name its code objects carry (empty: "<block>").
  std::string file;
  // kExec, kMain, kEval: the namespace it runs in (_vis.namespace).
  std::string ns;
  // kCall: module.function(*args), args a JSON array; kRunModule: the module `-m` names.
  std::string module;
  std::string function;
  std::string args_json;
  // kRepl: print python3's banner; run PYTHONSTARTUP first.
  bool banner = false;
  bool startup = false;
};

struct StartOptions {
  std::string home;  // empty for a built checkout
  std::string distRoot;
  std::string executable;
  std::vector<std::string> readRoots;
  std::vector<std::string> sysPath;
  std::vector<std::string> argv;
  bool capture = true;
  bool audit = true;
  int interruptSignal = 0;
  // `vis python`: python3's default config, argv parsed by CPython as its command line.
  bool cli = false;
};

void StartInterpreter(const StartOptions& opts);
// Queues a job and wakes the interpreter thread wherever it sleeps.
void Submit(std::unique_ptr<Job> job);
// Queues a job from the thread reading the wire (the interpreter thread checks its queue
// before it reads again, so no wake-up is needed).
void Enqueue(std::unique_ptr<Job> job);
bool QueueEmpty();
// Wakes the interpreter thread out of its queue wait (wire mode just turned on).
void WakeQueue();
bool Interrupt(uint64_t job);
// Re-sends a pending interrupt every ~20 ms; true while one is still in flight.
bool InterruptTick();
bool OnPythonThread();

extern std::atomic<uint64_t> g_current_job;
extern std::atomic<uint64_t> g_interrupt_job;
extern std::atomic<uint64_t> g_landed_job;

inline bool InterruptPending() {
  uint64_t t = g_interrupt_job.load();
  return t != 0 && t == g_current_job.load() && g_landed_job.load() != t;
}

// ---- captured output (output.cc) --------------------------------------------
void OutputWrite(int stream, const char* data, size_t len);
void OutputFlush();
void OutputJobStart(uint64_t job);
void OutputJobEnd();
bool OutputTake(uint64_t job, std::string* out, std::string* err);
void TickerStart();
void TickerWake();

// ---- host calls (hostcalls.cc) ----------------------------------------------
// Returns 0, with the reason in *refused, for a call that cannot be sent (over the
// wire's limits); the caller raises it in Python.
uint64_t HostSend(const std::string& name, const std::string& args, std::string* refused);
// 0: *which/*reply set; 1: interrupted (those ids cancelled); -1: an id is unknown.
int HostWait(const std::vector<uint64_t>& ids, bool interruptible, uint64_t* which, std::string* reply);
bool HostReply(uint64_t call, const std::string& reply);
void HostCancelJob(uint64_t job);
void HostWakeAll();

// ---- the _vis module (vis_module.cc) ----------------------------------------
PyObject* PyInit__vis();
PyObject* Namespace(const char* name);  // new reference
bool InstallStreams();
PyObject* SigintHandler();                         // new reference to _vis._sigint
PyObject* VisDictVersion(PyObject*, PyObject* d);  // _vis.dict_version (dict_version.cc)

// ---- the audit hook (audit.cc) ----------------------------------------------
struct Policy {
  std::vector<std::string> readOnly;
  std::vector<std::string> readWrite;
  // Roots the session may read but not change (a read-only session, the other roots of a
  // review): a write refused under one says why (readOnlyWhy) instead of "outside the roots".
  std::vector<std::string> readOnlyRoots;
  std::string readOnlyWhy;
  bool network = false;
  bool allowAll = true;  // network on with no allow list
  std::vector<std::string> allow;
  bool processes = false;
  bool ctypes = false;
};
void AuditInstall(const std::vector<std::string>& readRoots, const std::string& distRoot);
void AuditSetPolicy(const Policy& p);
// Non-empty: why writes that could grow the roots are refused (the session's disk budget).
void AuditSetWriteRefusal(const std::string& why);
// After start-up, before guest code: remember what the hook trusts (types.coroutine).
void AuditAfterInit();

// ---- wire mode (wire.cc) ------------------------------------------------------
// The limits the host applies to a frame it reads (src/protocol/framing.ts:
// DEFAULT_MAX_FRAME_CHARS, DEFAULT_MAX_DEPTH), handed over by wireStart. A host call
// that would pass them is refused in the guest, before it is sent: the host would
// retire the worker for an oversized frame.
struct WireLimits {
  size_t max_chars = 16 * 1024 * 1024;
  int max_depth = 64;
  // How long the interpreter thread polls the socket before it sleeps (see wire.cc).
  long spin_ns = 0;
};
bool WireStart(int fd, const std::vector<std::string>& ops, const std::string& module, const std::string& fn,
               const WireLimits& limits);
const WireLimits& WireHostLimits();
size_t Utf16Units(const std::string& s);
bool WireOn();
// Wakes the interpreter thread out of WireIdle (any thread; async-signal-unsafe).
void WireWake();
// Interpreter thread, GIL released: read the socket until something happens.
void WireIdle(bool checkQueue);
// Interpreter thread, before executing bytecode: the reader thread takes over reading.
void WireGiveToken();
// Interpreter thread: from now on only it reads (waits out a read in progress).
void WireTakeToken();
bool WireWrite(const std::string& line);
bool IsWireJob(uint64_t job);
// depth (optional): how deep the value nests, counting its own container as 1.
bool WireJsonValue(const std::string& s, int* depth = nullptr);
void WireOutput(uint64_t job, const std::vector<Chunk>& chunks);
void WireBegin(uint64_t job);
void WireEnd();
// Calls the guest's handler with the request line; returns the reply line ("" for none).
std::string WireRun(const Job& job);

// ---- the running block's stdin (stdin.cc) -------------------------------------
// 0 queued; 1 the job has finished; 2 over the buffer cap (*buffered: bytes waiting).
int StdinFeed(uint64_t job, std::string&& line, size_t* buffered);
// Blocks (GIL released) for the next `stdin` request line of the running job.
// 0: *line set; 1: interrupted; 2: nothing can arrive (no wire job is running).
int StdinWait(std::string* line);
void StdinJobStart(uint64_t job);
void StdinJobEnd(uint64_t job);
void StdinWakeAll();

// ---- signals (signals.cc) ------------------------------------------------------
// On the interpreter thread after start-up: Python's handlers run there (see signals.cc).
// python_sigint: SIGINT's C handler is Python's (`vis python`), forwarded like the rest.
bool SignalsInstall(int private_signal, bool python_sigint);

// ---- python3's command line (cli_main.cc) -------------------------------------
PyStatus CliPreInitialize(std::vector<char*>* argv);
void CliConfigInit(PyConfig* config);
// After start-up: sets sys.path[0]; returns what to run as JSON (command/module/file,
// inspect, quiet).
std::string CliPlan(const PyConfig& config);
PyObject* RunModuleMain(const std::string& name);
PyObject* RunRepl(bool banner, bool startup);

// ---- what a job answers (outcome.cc) ------------------------------------------
// The json module (borrowed; imported once, kept for the interpreter's life).
PyObject* JsonModule();
// json.dumps(v, allow_nan=False, ensure_ascii=False): JSON text, or empty with the error set.
PyRef Dumps(PyObject* v);
// SystemExit's status as python3 computes it; *print: the text it prints for a non-int code.
int ExitCodeOf(PyObject* value, std::string* print);
// The error outcome of the fetched, normalized exception; the guest's line and column come
// from the deepest traceback frame that ran in `file`.
std::string ErrorOutcome(uint64_t job, PyObject* type, PyObject* value, PyObject* tb, const std::string& file);

// ---- helpers ------------------------------------------------------------------
void JsonQuote(std::string* out, const std::string& s);
void JsonQuoteBytes(std::string* out, const char* p, size_t n);
// How many leading bytes of p[0..n) a JSON string carries unescaped.
size_t JsonPlainRun(const char* p, size_t n);
bool JsonSkipString(const std::string& s, size_t* i);
// UTF-8 of a str (lone surrogates replaced); false with a Python error set otherwise.
bool Utf8(PyObject* s, std::string* out);

}  // namespace vis
