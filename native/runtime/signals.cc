// Signals reach Python the way they do in python3. The interpreter runs on its own
// thread inside Node, so the kernel hands a process-directed signal (kill, alarm,
// setitimer) to whichever thread does not block it, usually one of Node's: Python's C
// handler then trips its flag there, but the interpreter thread's blocking call
// (select, sleep, pause, write) never sees EINTR and the handler waits for the next
// bytecode. Node's threads already exist, so their masks cannot be changed; instead
// each thread that existed before Python started (Node's, the addon's) is made to block
// every signal Python installs a handler for: a private signal (MaskSignal()) runs a
// handler on that thread which adds them to the mask restored when it returns. Threads
// Node creates later inherit the mask of their (masked) creator. So the kernel delivers
// to the interpreter thread (or a thread Python started), synchronously when the program
// signals itself, as python3 does with its main thread. Forward() wraps Python's C
// handler for what still lands elsewhere (a thread not yet masked, a Python thread):
// it re-sends the signal to the interpreter thread with pthread_kill, where Python's own
// handler runs and interrupts the blocking call.
//
// Also: signal.getsignal() reports None for a disposition Python did not set (a
// handler Node installed), and save-and-restore code then fails restoring None. At
// start every such signal is recorded as SIG_DFL in Python's table while the OS
// disposition is left as it was.
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <vector>

#include "runtime.h"

namespace vis {
namespace {

pthread_t g_py_thread;
int g_private = 0;  // the runtime's interrupt signal: its C handler is the runtime's own
// Python's C handler for each signal Forward() wraps; written before Forward is installed.
struct sigaction g_python_handler[_NSIG];
PyObject* g_real_signal = nullptr;  // _signal.signal as CPython defines it

// Signals the host's threads block; read by MaskHandler, grown only on the interpreter thread.
// MaskSignal(): SIGRTMAX-2, which neither Node nor CPython uses.
sigset_t g_host_blocked;
std::vector<pid_t>* g_host_threads = new std::vector<pid_t>;  // never freed (exit order)
int MaskSignal() { return SIGRTMAX - 2; }

// Runs on a host thread: the mask restored on return from a handler is uc_sigmask.
void MaskHandler(int, siginfo_t*, void* ctx) {
  auto* uc = static_cast<ucontext_t*>(ctx);
  for (int sig = 1; sig < _NSIG; ++sig) {
    if (sigismember(&g_host_blocked, sig) == 1) sigaddset(&uc->uc_sigmask, sig);
  }
}

// The threads of this process other than the calling (interpreter) thread.
void SnapshotHostThreads() {
  pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return;
  for (dirent* e = readdir(d); e != nullptr; e = readdir(d)) {
    pid_t tid = static_cast<pid_t>(atoi(e->d_name));
    if (tid > 0 && tid != self) g_host_threads->push_back(tid);
  }
  closedir(d);
}

void BlockInHostThreads(int sig) {
  if (sigismember(&g_host_blocked, sig) == 1) return;
  sigaddset(&g_host_blocked, sig);
  pid_t pid = getpid();
  for (pid_t tid : *g_host_threads) syscall(SYS_tgkill, pid, tid, MaskSignal());
}

void CallPythonHandler(int sig, siginfo_t* info, void* ctx) {
  const struct sigaction& h = g_python_handler[sig];
  if (h.sa_flags & SA_SIGINFO) {
    h.sa_sigaction(sig, info, ctx);
  } else if (h.sa_handler != SIG_DFL && h.sa_handler != SIG_IGN) {
    h.sa_handler(sig);
  }
}

void Forward(int sig, siginfo_t* info, void* ctx) {
  int saved = errno;
  // A signal sent at one thread on purpose (pthread_kill, SI_TKILL) is handled where it
  // was sent, as python3 does; a process-directed one belongs to the interpreter thread.
  bool directed = info != nullptr && info->si_code == SI_TKILL;
  if (pthread_equal(pthread_self(), g_py_thread) || directed) {
    CallPythonHandler(sig, info, ctx);
  } else {
    pthread_kill(g_py_thread, sig);
  }
  errno = saved;
}

bool IsForward(const struct sigaction& sa) { return (sa.sa_flags & SA_SIGINFO) && sa.sa_sigaction == Forward; }

// After Python changed sig's disposition: wrap its C handler in Forward.
void Adopt(int sig) {
  if (sig <= 0 || sig >= _NSIG || sig == g_private) return;
  struct sigaction cur;
  if (sigaction(sig, nullptr, &cur) != 0 || IsForward(cur)) return;
  if (!(cur.sa_flags & SA_SIGINFO) && (cur.sa_handler == SIG_DFL || cur.sa_handler == SIG_IGN)) return;
  g_python_handler[sig] = cur;
  struct sigaction fw = cur;
  fw.sa_sigaction = Forward;
  fw.sa_flags = cur.sa_flags | SA_SIGINFO;
  sigaction(sig, &fw, nullptr);
  BlockInHostThreads(sig);
}

// _signal.signal(signalnum, handler): CPython's, then the disposition it set is adopted.
// For the runtime's own signals (the interrupt, MaskSignal()) the runtime's C handler is
// put back: Python's table records what was asked, but the runtime keeps working.
PyObject* SignalWrapper(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  int sig = -1;
  struct sigaction before;
  if (nargs >= 1 && PyLong_Check(args[0])) {
    sig = static_cast<int>(PyLong_AsLong(args[0]));
    if (PyErr_Occurred()) {
      PyErr_Clear();
      sig = -1;
    }
  }
  const bool runtime_own = sig > 0 && (sig == g_private || sig == MaskSignal());
  if (runtime_own) sigaction(sig, nullptr, &before);
  PyObject* r = PyObject_Vectorcall(g_real_signal, args, static_cast<size_t>(nargs), nullptr);
  if (r == nullptr) return nullptr;
  if (runtime_own) {
    sigaction(sig, &before, nullptr);
  } else {
    Adopt(sig);
  }
  return r;
}

PyMethodDef g_wrapper_def = {"signal", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(SignalWrapper)),
                             METH_FASTCALL, nullptr};

// Python's table says None where the disposition was set outside Python: record SIG_DFL
// there, then put the OS disposition back exactly as it was.
bool ReportForeignAsDefault(PyObject* signal_mod) {
  PyRef getsignal(PyObject_GetAttrString(signal_mod, "getsignal"));
  PyRef dfl(PyObject_GetAttrString(signal_mod, "SIG_DFL"));
  PyRef valid(PyObject_CallMethod(signal_mod, "valid_signals", nullptr));
  PyRef it(valid ? PyObject_GetIter(valid.get()) : nullptr);
  bool ok = getsignal && dfl && it;
  for (PyRef item(ok ? PyIter_Next(it.get()) : nullptr); item; item.Reset(PyIter_Next(it.get()))) {
    PyRef handler(PyObject_CallOneArg(getsignal.get(), item.get()));
    long sig = PyLong_AsLong(item.get());
    if (handler.get() == Py_None && sig > 0 && sig < _NSIG) {
      struct sigaction saved;
      sigaction(static_cast<int>(sig), nullptr, &saved);
      PyRef(PyObject_CallFunctionObjArgs(g_real_signal, item.get(), dfl.get(), nullptr));
      sigaction(static_cast<int>(sig), &saved, nullptr);
    }
    PyErr_Clear();  // signals Python may not touch (SIGKILL) stay as they are
  }
  if (PyErr_Occurred()) ok = false;
  return ok;
}

}  // namespace

bool SignalsInstall(int private_signal, bool python_sigint) {
  g_py_thread = pthread_self();
  g_private = private_signal;
  sigemptyset(&g_host_blocked);
  struct sigaction ms = {};
  ms.sa_sigaction = MaskHandler;
  sigemptyset(&ms.sa_mask);
  ms.sa_flags = SA_SIGINFO | SA_RESTART;  // the host thread's own syscalls just carry on
  sigaction(MaskSignal(), &ms, nullptr);
  SnapshotHostThreads();
  PyRef signal_mod(PyImport_ImportModule("_signal"));
  if (!signal_mod) return false;
  g_real_signal = PyObject_GetAttrString(signal_mod.get(), "signal");  // kept for the process's life
  PyRef wrapper(g_real_signal ? PyCFunction_New(&g_wrapper_def, nullptr) : nullptr);
  bool ok = wrapper && ReportForeignAsDefault(signal_mod.get()) &&
            PyObject_SetAttrString(signal_mod.get(), "signal", wrapper.get()) == 0;
  // At start the only C handlers Python installed is SIGINT's, and only `vis python`
  // keeps it (elsewhere InstallSigint put Node's back; Node's are not Python's to wrap).
  if (ok && python_sigint) Adopt(SIGINT);
  return ok;
}

}  // namespace vis
