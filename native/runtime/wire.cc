// Wire mode: the worker child's hot path. Work ops run on the interpreter thread, whose
// handler (a guest Python function) returns the reply line, written here without a trip
// through JS. Interrupts and stdin are handled on arrival; output notifications and host
// calls of wire jobs are written to the socket directly. Every other line goes to JS.
//
// Who reads the socket: every cross-thread wake-up costs ~40 us on these VMs, so the
// interpreter thread reads it itself whenever it would otherwise sleep (idle between
// jobs, or waiting for a host-call reply): a request or a reply then wakes exactly the
// thread that acts on it, as in a plain Node<->Node ping-pong. While Python executes
// bytecode the reader thread reads instead, so an interrupt still lands at once.
// The right to read is a token (`owner`); reading and dispatching happen under rd_mu,
// with lines split in one shared buffer, so the handover never loses or splits a line.
//
// Waking a sleeping thread costs ~20-40 us on these VMs, as much as the rest of a round
// trip. So before it sleeps, the interpreter thread polls the socket for a short while
// (spin_ns, default 100 us): in a run of requests or host-call replies that follow each
// other quickly, the next one is picked up without a wake-up at all. It is adaptive (a
// wait that last time outlasted twice the budget does not spin), yields the CPU on
// every turn, and is off on a single CPU, where spinning would only delay the peer.
#include <errno.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "runtime.h"

namespace vis {

namespace {

enum Owner : int { kInterp = 0, kReader = 1 };

// How long Python may run bytecode before the reader thread starts reading (and so how
// late, at most, an interrupt sent at that moment is noticed).
constexpr long kHandoverDelayNs = 300 * 1000;

struct WireState {
  int fd = -1;
  int ctl = -1;  // eventfd: wakes the interpreter thread out of its poll
  std::mutex write_mu;
  std::set<std::string> work_ops;
  std::string module, fn;
  WireLimits limits;
  std::atomic<uint64_t> job{0};  // the wire job now running, 0 if none
  std::atomic<bool> on{false};
  std::atomic<bool> closed{false};
  // Reading: the token, the lock held while reading + dispatching, the shared buffer.
  std::atomic<int> owner{kInterp};
  std::mutex rd_mu;
  std::string buf;
  // The reader thread sleeps on this timer while the interpreter thread holds the token.
  // Handing the token over arms it rather than waking the thread: a job that ends
  // within kHandoverDelay (most do) costs no wake-up of a second thread at all.
  int timer = -1;
  // Armed and not yet consumed by the reader thread; when the token was last handed over.
  std::atomic<bool> armed{false};
  std::atomic<int64_t> given_ns{0};
  // Spinning: the budget, and how long the interpreter thread's last wait lasted.
  int64_t spin_ns = 0;
  std::atomic<int64_t> last_wait_ns{0};
};
WireState* g_wire = new WireState;

void SkipWs(const std::string& s, size_t* i) {
  while (*i < s.size() && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\r' || s[*i] == '\n')) ++*i;
}

// With max_depth, also reports how deep the value nests (containers, the value itself 1).
bool SkipValue(const std::string& s, size_t* i, int* max_depth = nullptr) {
  SkipWs(s, i);
  if (*i >= s.size()) return false;
  if (s[*i] == '"') return JsonSkipString(s, i);
  if (s[*i] == '{' || s[*i] == '[') {
    int depth = 0;
    while (*i < s.size()) {
      char c = s[*i];
      if (c == '"') {
        if (!JsonSkipString(s, i)) return false;
        continue;
      }
      if (c == '{' || c == '[') {
        depth++;
        if (max_depth != nullptr && depth > *max_depth) *max_depth = depth;
      }
      if (c == '}' || c == ']') {
        if (--depth == 0) {
          ++*i;
          return true;
        }
      }
      ++*i;
    }
    return false;
  }
  while (*i < s.size() && s[*i] != ',' && s[*i] != '}' && s[*i] != ' ' && s[*i] != '\n') ++*i;
  return true;
}

// The raw JSON text of the top-level members named op, id and job (when present).
struct Head {
  std::string op;  // decoded only for plain strings, enough for op names
  bool has_op = false;
  uint64_t id = 0;
  bool has_id = false;
  uint64_t job = 0;
};

bool ParseHead(const std::string& s, Head* h) {
  size_t i = 0;
  SkipWs(s, &i);
  if (i >= s.size() || s[i] != '{') return false;
  ++i;
  for (;;) {
    SkipWs(s, &i);
    if (i < s.size() && s[i] == '}') return true;
    size_t k0 = i;
    if (!JsonSkipString(s, &i)) return false;
    std::string key = s.substr(k0 + 1, i - k0 - 2);
    SkipWs(s, &i);
    if (i >= s.size() || s[i] != ':') return false;
    ++i;
    SkipWs(s, &i);
    size_t v0 = i;
    if (!SkipValue(s, &i)) return false;
    std::string raw = s.substr(v0, i - v0);
    if (key == "op" && raw.size() >= 2 && raw[0] == '"') {
      h->op = raw.substr(1, raw.size() - 2);
      h->has_op = true;
    } else if (key == "id") {
      h->id = strtoull(raw.c_str(), nullptr, 10);
      h->has_id = raw.size() > 0 && raw[0] >= '0' && raw[0] <= '9';
    } else if (key == "job") {
      h->job = strtoull(raw.c_str(), nullptr, 10);
    }
    SkipWs(s, &i);
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    return i < s.size() && s[i] == '}';
  }
}

void PostWire(EventKind kind, const std::string& line) {
  auto ev = std::make_unique<Event>(kind);
  ev->text = line;
  Post(std::move(ev));
}

void Ack(uint64_t id, const std::string& value) {
  WireWrite("{\"id\":" + std::to_string(id) + ",\"ok\":true,\"value\":" + value + "}");
}

void Refuse(uint64_t id, const char* code, const std::string& message) {
  std::string line =
      "{\"id\":" + std::to_string(id) + ",\"ok\":false,\"error\":{\"code\":\"" + code + "\",\"message\":";
  JsonQuote(&line, message);
  WireWrite(line + "}}");
}

// One whole line, under rd_mu, on whichever thread holds the token.
void Dispatch(std::string&& line) {
  Head h;
  if (!ParseHead(line, &h)) {
    PostWire(kWireMessage, line);  // JS reports the malformed line
    return;
  }
  if (!h.has_op) {
    if (!(h.has_id && HostReply(h.id, line))) PostWire(kWireMessage, line);
    return;
  }
  if (h.op == "interrupt") {
    bool landed = Interrupt(h.job);
    if (h.has_id) Ack(h.id, landed ? "true" : "false");
    return;
  }
  if (h.op == "stdin" && h.has_id) {
    // For the job named (or the running one); a finished job's input has nowhere to go.
    uint64_t job = h.job != 0 ? h.job : g_wire->job.load();
    size_t buffered = 0;
    int rc = job == 0 ? 1 : StdinFeed(job, std::move(line), &buffered);
    if (rc == 1) {
      Refuse(h.id, "worker.stdin-closed", "no block is running to read this input (it finished or never started)");
      return;
    }
    if (rc == 2) {
      Refuse(h.id, "worker.stdin-full",
             "the block has not read the input already sent (" + std::to_string(buffered) + " bytes buffered)");
      return;
    }
    Ack(h.id, "{\"buffered\":" + std::to_string(buffered) + "}");
    return;
  }
  if (h.has_id && g_wire->work_ops.count(h.op) != 0) {
    auto job = std::make_unique<Job>();
    job->kind = kWire;
    job->id = h.id;
    job->source = std::move(line);
    Enqueue(std::move(job));  // the interpreter thread looks at its queue before it reads again
    return;
  }
  PostWire(kWireMessage, line);
}

void ArmTimer(long ns) {
  if (ns <= 0) ns = 1;  // zero would disarm it
  struct itimerspec t = {};
  t.it_value.tv_nsec = ns;
  timerfd_settime(g_wire->timer, 0, &t, nullptr);
}

void MarkClosed(const std::string& why) {
  if (g_wire->closed.exchange(true)) return;
  PostWire(kWireClosed, why);
  ArmTimer(1);  // the reader thread wakes and leaves
  WireWake();
}

// Reads what the socket has (never blocks) and dispatches every whole line. Under rd_mu.
void PumpLocked() {
  char chunk[65536];
  for (;;) {
    if (g_wire->closed.load()) return;
    ssize_t n = recv(g_wire->fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      MarkClosed(n == 0 ? "eof" : strerror(errno));
      return;
    }
    std::string& buf = g_wire->buf;
    size_t scan = buf.size();
    buf.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = buf.find('\n', scan)) != std::string::npos; start = scan = nl + 1) {
      if (start == 0 && nl + 1 == buf.size()) {
        // The usual case, one whole line: handed over without a copy.
        std::string line;
        line.swap(buf);
        line.pop_back();
        if (!line.empty()) Dispatch(std::move(line));
        start = 0;
        break;
      }
      if (nl > start) Dispatch(buf.substr(start, nl - start));
    }
    buf.erase(0, start);
    if (static_cast<size_t>(n) < sizeof(chunk)) return;  // drained; the next poll says if more came
  }
}

int64_t MonoNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Arms the handover timer unless it is armed already (the reader re-checks on expiry).
void ArmOnce(long ns) {
  if (!g_wire->armed.exchange(true)) ArmTimer(ns);
}

void ReaderMain() {
  for (;;) {
    // Asleep on the timer until a handover is due, then reading while the token is ours.
    struct pollfd t = {g_wire->timer, POLLIN, 0};
    if (poll(&t, 1, -1) < 0 && errno != EINTR) return;
    uint64_t expirations;
    while (read(g_wire->timer, &expirations, sizeof(expirations)) < 0 && errno == EINTR) {
    }
    if (g_wire->closed.load()) return;
    // Cleared before the owner is looked at: a handover racing with this either sees the
    // flag clear and arms again, or is seen here.
    g_wire->armed.store(false);
    if (g_wire->owner.load() != kReader) continue;
    int64_t held = MonoNs() - g_wire->given_ns.load();
    if (held < kHandoverDelayNs) {
      // A later job has the token now: it has not run long enough yet.
      ArmOnce(kHandoverDelayNs - static_cast<long>(held));
      continue;
    }
    while (g_wire->owner.load() == kReader && !g_wire->closed.load()) {
      struct pollfd p = {g_wire->fd, POLLIN, 0};
      int rc = poll(&p, 1, -1);
      if (rc < 0 && errno != EINTR) {
        MarkClosed(strerror(errno));
        return;
      }
      // Checked before taking the lock, so a line the interpreter thread is reading never
      // makes this thread wait on rd_mu (and the interpreter thread wake it on unlock).
      if (g_wire->owner.load() != kReader) break;
      std::lock_guard<std::mutex> lk(g_wire->rd_mu);
      if (g_wire->owner.load() == kReader) PumpLocked();
    }
    if (g_wire->closed.load()) return;
  }
}

}  // namespace

// The interpreter thread takes the token back: once this returns the reader thread is
// not inside a read, and will not start one.
void WireTakeToken() {
  if (g_wire->owner.load() == kInterp) return;
  std::lock_guard<std::mutex> lk(g_wire->rd_mu);
  g_wire->owner.store(kInterp);
}

namespace {

void DrainCtl() {
  uint64_t v;
  while (read(g_wire->ctl, &v, sizeof(v)) < 0 && errno == EINTR) {
  }
}

}  // namespace

// A cheap structural check (balanced, quoted) so a host request line stays parseable.
bool WireJsonValue(const std::string& s, int* depth) {
  size_t i = 0;
  if (depth != nullptr) *depth = 0;
  if (!SkipValue(s, &i, depth)) return false;
  SkipWs(s, &i);
  return i == s.size();
}

const WireLimits& WireHostLimits() { return g_wire->limits; }

// What the host's LineDecoder counts: the line's length as a JavaScript string (UTF-16
// code units) after UTF-8 decoding, i.e. one per character, two past U+FFFF.
size_t Utf16Units(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) n++;
    if (c >= 0xF0) n++;
  }
  return n;
}

bool WireStart(int fd, const std::vector<std::string>& ops, const std::string& module, const std::string& fn,
               const WireLimits& limits) {
  if (g_wire->fd >= 0) return false;
  g_wire->limits = limits;
#if defined(__GLIBC__)
  // Payloads of tens or hundreds of KiB are allocated and freed on every request; with
  // glibc's defaults the freed heap top goes back to the kernel each time and the next
  // request faults the same pages in again (~20% of a 64 KiB round trip).
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif
  cpu_set_t cpus;
  bool one_cpu = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) < 2;
  g_wire->spin_ns = one_cpu ? 0 : limits.spin_ns;
  g_wire->ctl = eventfd(0, EFD_CLOEXEC);
  g_wire->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (g_wire->ctl < 0 || g_wire->timer < 0) return false;
  g_wire->fd = fd;
  g_wire->work_ops.insert(ops.begin(), ops.end());
  g_wire->module = module;
  g_wire->fn = fn;
  g_wire->owner.store(kInterp);
  std::thread(ReaderMain).detach();
  g_wire->on.store(true);
  WakeQueue();  // the idle interpreter thread starts reading the socket
  return true;
}

bool WireOn() { return g_wire->on.load(); }

void WireWake() {
  if (g_wire->ctl < 0) return;
  uint64_t one = 1;
  while (write(g_wire->ctl, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

// On the interpreter thread, GIL released, instead of sleeping: waits for the socket or
// a wake-up (WireWake, a signal), and dispatches what arrived. With checkQueue it
// returns at once if a job is queued (the reader thread may have queued one).
void WireIdle(bool checkQueue) {
  WireTakeToken();
  if (checkQueue && !QueueEmpty()) return;
  struct pollfd p[2] = {{g_wire->ctl, POLLIN, 0}, {g_wire->fd, POLLIN, 0}};
  const nfds_t n = g_wire->closed.load() ? 1 : 2;
  const int64_t spin = g_wire->spin_ns;
  const int64_t t0 = spin > 0 ? MonoNs() : 0;
  int rc = 0;
  if (spin > 0 && g_wire->last_wait_ns.load(std::memory_order_relaxed) <= 2 * spin) {
    while ((rc = poll(p, n, 0)) == 0 && MonoNs() - t0 < spin) sched_yield();
  }
  if (rc == 0) rc = poll(p, n, -1);
  if (spin > 0) g_wire->last_wait_ns.store(MonoNs() - t0, std::memory_order_relaxed);
  if (rc <= 0) return;  // EINTR: an interrupt kick; the caller looks again
  if (p[0].revents != 0) DrainCtl();
  if (!g_wire->closed.load() && p[1].revents != 0) {
    std::lock_guard<std::mutex> lk(g_wire->rd_mu);
    PumpLocked();
  }
}

// Python is about to execute bytecode: the reader thread reads, so interrupts land.
void WireGiveToken() {
  if (!g_wire->on.load() || g_wire->owner.load() == kReader) return;
  g_wire->given_ns.store(MonoNs());
  g_wire->owner.store(kReader);
  // Arming a timer costs a VM exit (~6 us here), so a timer already armed is reused: the
  // reader thread re-arms it for what is left when it fires early for a later job.
  ArmOnce(kHandoverDelayNs);
}

bool WireWrite(const std::string& line) {
  if (g_wire->fd < 0) return false;
  // The line and its newline go out in one writev, without copying a big reply.
  static const char nl = '\n';
  struct iovec iov[2] = {{const_cast<char*>(line.data()), line.size()}, {const_cast<char*>(&nl), 1}};
  std::lock_guard<std::mutex> lk(g_wire->write_mu);
  int at = 0;
  while (at < 2) {
    ssize_t n = writev(g_wire->fd, iov + at, 2 - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    size_t left = static_cast<size_t>(n);
    while (at < 2 && left >= iov[at].iov_len) left -= iov[at++].iov_len;
    if (at < 2) {
      iov[at].iov_base = static_cast<char*>(iov[at].iov_base) + left;
      iov[at].iov_len -= left;
    }
  }
  return true;
}

bool IsWireJob(uint64_t job) { return job != 0 && job == g_wire->job.load(); }

void WireOutput(uint64_t job, const std::vector<Chunk>& chunks) {
  for (const auto& c : chunks) {
    std::string line = "{\"op\":\"output\",\"job\":" + std::to_string(job) + ",\"stream\":\"" +
                       (c.stream == 2 ? "stderr" : "stdout") + "\",\"data\":";
    JsonQuote(&line, c.text);
    line += "}";
    WireWrite(line);
  }
}

// On the interpreter thread with the GIL: hands the request line to the guest's handler
// and writes the reply line it returns (none for None).
void WireBegin(uint64_t job) {
  g_wire->job.store(job);
  StdinJobStart(job);
}

void WireEnd() {
  uint64_t job = g_wire->job.exchange(0);
  if (job != 0) StdinJobEnd(job);
}

std::string WireRun(const Job& job) {
  std::string reply;
  // Resolved once and kept for the interpreter's life: the handler is the worker's own
  // module, not something a guest rebinds.
  static PyObject* handler = nullptr;
  if (handler == nullptr) {
    PyRef mod(PyImport_ImportModule(g_wire->module.c_str()));
    handler = mod ? PyObject_GetAttrString(mod.get(), g_wire->fn.c_str()) : nullptr;
  }
  PyRef fn = PyRef::Borrow(handler);
  PyRef r(fn ? PyObject_CallFunction(fn.get(), "s#", job.source.data(), static_cast<Py_ssize_t>(job.source.size()))
             : nullptr);
  bool ok = r && (r.get() == Py_None || (PyUnicode_Check(r.get()) && Utf8(r.get(), &reply)));
  if (!ok) {
    std::string msg = "the wire handler " + g_wire->module + "." + g_wire->fn + " failed";
    PyObject *raw_type = nullptr, *raw_value = nullptr, *raw_tb = nullptr;
    PyErr_Fetch(&raw_type, &raw_value, &raw_tb);
    PyRef type(raw_type), value(raw_value), tb(raw_tb);
    if (value) {
      PyRef str(PyObject_Str(value.get()));
      std::string text;
      if (str && Utf8(str.get(), &text)) msg += ": " + text;
    }
    PyErr_Clear();
    reply = "{\"id\":" + std::to_string(job.id) + ",\"ok\":false,\"error\":{\"code\":\"worker.handler\",\"message\":";
    JsonQuote(&reply, msg);
    reply += "}}";
  }
  return reply;
}

}  // namespace vis
