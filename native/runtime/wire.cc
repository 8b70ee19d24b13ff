// Wire mode: the worker child's hot path. A reader thread owns the inherited socket;
// work ops go straight to the interpreter thread, whose handler (a guest Python
// function) returns the reply line, written here without a trip through JS. Interrupts
// are handled on arrival. Output notifications and host calls of wire jobs are written
// to the socket directly. Every other line is handed to JS.
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <mutex>
#include <set>
#include <thread>

#include "runtime.h"

namespace vis {

namespace {

struct WireState {
  int fd = -1;
  std::mutex write_mu;
  std::set<std::string> work_ops;
  std::string module, fn;
  std::atomic<uint64_t> job{0};  // the wire job now running, 0 if none
};
WireState* g_wire = new WireState;

void SkipWs(const std::string& s, size_t* i) {
  while (*i < s.size() && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\r' || s[*i] == '\n')) ++*i;
}

bool SkipString(const std::string& s, size_t* i) {
  if (*i >= s.size() || s[*i] != '"') return false;
  for (++*i; *i < s.size(); ++*i) {
    if (s[*i] == '\\') {
      ++*i;
    } else if (s[*i] == '"') {
      ++*i;
      return true;
    }
  }
  return false;
}

bool SkipValue(const std::string& s, size_t* i) {
  SkipWs(s, i);
  if (*i >= s.size()) return false;
  if (s[*i] == '"') return SkipString(s, i);
  if (s[*i] == '{' || s[*i] == '[') {
    int depth = 0;
    while (*i < s.size()) {
      char c = s[*i];
      if (c == '"') {
        if (!SkipString(s, i)) return false;
        continue;
      }
      if (c == '{' || c == '[') depth++;
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
    if (!SkipString(s, &i)) return false;
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
  auto* ev = new Event{kind};
  ev->a = line;
  Post(ev);
}

void ReaderMain(int fd) {
  std::string buf;
  char chunk[65536];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      PostWire(kWireClosed, n == 0 ? "eof" : strerror(errno));
      return;
    }
    buf.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string line = buf.substr(start, nl - start);
      if (line.empty()) continue;
      Head h;
      if (!ParseHead(line, &h)) {
        PostWire(kWireMessage, line);  // JS reports the malformed line
        continue;
      }
      if (!h.has_op) {
        if (!(h.has_id && HostReply(h.id, line))) PostWire(kWireMessage, line);
        continue;
      }
      if (h.op == "interrupt") {
        bool landed = Interrupt(h.job);
        if (h.has_id) WireWrite("{\"id\":" + std::to_string(h.id) + ",\"ok\":true,\"value\":" + (landed ? "true" : "false") + "}");
        continue;
      }
      if (h.has_id && g_wire->work_ops.count(h.op) != 0) {
        auto* job = new Job{kWire, h.id};
        job->a = std::move(line);
        Submit(job);
        continue;
      }
      PostWire(kWireMessage, line);
    }
    buf.erase(0, start);
  }
}

}  // namespace

// A cheap structural check (balanced, quoted) so a host request line stays parseable.
bool WireJsonValue(const std::string& s) {
  size_t i = 0;
  if (!SkipValue(s, &i)) return false;
  SkipWs(s, &i);
  return i == s.size();
}

bool WireStart(int fd, const std::vector<std::string>& ops, const std::string& module, const std::string& fn) {
  if (g_wire->fd >= 0) return false;
  g_wire->fd = fd;
  g_wire->work_ops.insert(ops.begin(), ops.end());
  g_wire->module = module;
  g_wire->fn = fn;
  std::thread(ReaderMain, fd).detach();
  return true;
}

bool WireWrite(const std::string& line) {
  if (g_wire->fd < 0) return false;
  std::string out = line;
  out.push_back('\n');
  std::lock_guard<std::mutex> lk(g_wire->write_mu);
  size_t off = 0;
  while (off < out.size()) {
    ssize_t n = write(g_wire->fd, out.data() + off, out.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
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
void WireBegin(uint64_t job) { g_wire->job.store(job); }
void WireEnd() { g_wire->job.store(0); }

std::string WireRun(Job* job) {
  std::string reply;
  PyObject* mod = PyImport_ImportModule(g_wire->module.c_str());
  PyObject* fn = mod ? PyObject_GetAttrString(mod, g_wire->fn.c_str()) : nullptr;
  PyObject* r = fn ? PyObject_CallFunction(fn, "s#", job->a.data(), static_cast<Py_ssize_t>(job->a.size())) : nullptr;
  bool ok = r != nullptr && (r == Py_None || (PyUnicode_Check(r) && Utf8(r, &reply)));
  if (!ok) {
    std::string msg = "the wire handler " + g_wire->module + "." + g_wire->fn + " failed";
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (value != nullptr) {
      PyObject* s = PyObject_Str(value);
      std::string text;
      if (s != nullptr && Utf8(s, &text)) msg += ": " + text;
      Py_XDECREF(s);
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Clear();
    reply = "{\"id\":" + std::to_string(job->id) + ",\"ok\":false,\"error\":{\"code\":\"worker.handler\",\"message\":";
    JsonQuote(&reply, msg);
    reply += "}}";
  }
  Py_XDECREF(r);
  Py_XDECREF(fn);
  Py_XDECREF(mod);
  return reply;
}

}  // namespace vis
