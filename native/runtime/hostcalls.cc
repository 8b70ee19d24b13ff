// Host calls: the guest asks JS for something by name and waits (GIL released) on a
// condition variable that both the reply and an interrupt notify, since signals do
// not wake futex waits.
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "runtime.h"

namespace vis {

namespace {

struct Call {
  uint64_t job = 0;
  bool done = false;
  std::string reply;
};

std::mutex* h_mu = new std::mutex;
std::condition_variable* h_cv = new std::condition_variable;
std::unordered_map<uint64_t, Call>* h_calls = new std::unordered_map<uint64_t, Call>;
std::atomic<uint64_t> h_next{0};

void PostCancel(uint64_t job, uint64_t call) {
  auto ev = std::make_unique<Event>(kHostCancel);
  ev->job = job;
  ev->call = call;
  Post(std::move(ev));
}

// Under h_mu: true (with *rc) when the wait is over: 0 a reply, 1 interrupted, -1 unknown id.
bool CheckLocked(const std::vector<uint64_t>& ids, bool interruptible, uint64_t* which, std::string* reply, int* rc) {
  for (uint64_t id : ids) {
    auto it = h_calls->find(id);
    if (it == h_calls->end()) {
      *rc = -1;
      return true;
    }
    if (it->second.done) {
      *which = id;
      reply->swap(it->second.reply);
      h_calls->erase(it);
      *rc = 0;
      return true;
    }
  }
  if (interruptible && InterruptPending()) {
    for (uint64_t id : ids) {
      auto it = h_calls->find(id);
      if (it == h_calls->end()) continue;
      PostCancel(it->second.job, id);
      h_calls->erase(it);
    }
    *rc = 1;
    return true;
  }
  return false;
}

// 20971520 -> "20,971,520": the sizes in a refusal are read by people and models.
std::string Grouped(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); i++) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string MiB(size_t n) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(n) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

uint64_t HostSend(const std::string& name, const std::string& args, std::string* refused) {
  uint64_t id = ++h_next;
  uint64_t job = g_current_job.load();
  if (IsWireJob(job)) {
    // Checked here, before anything is sent: the host retires a worker whose frame passes
    // its size cap, and refuses one nested past its depth cap.
    const WireLimits& lim = WireHostLimits();
    int depth = 0;
    if (!WireJsonValue(args, &depth)) {
      {
        std::lock_guard<std::mutex> lk(*h_mu);
        (*h_calls)[id] = Call{job};
      }
      HostReply(id, "{\"ok\":false,\"error\":{\"code\":\"host.bad-args\",\"message\":\"args_json is not JSON\"}}");
      return id;
    }
    if (depth + 1 > lim.max_depth) {  // + the envelope object around args
      *refused = name + ": the call's arguments nest " + std::to_string(depth) +
                 " levels deep; a host call carries at most " + std::to_string(lim.max_depth - 1) +
                 " (it was not sent). Flatten the data, or write it to a file in the session's roots and pass "
                 "the path.";
      return 0;
    }
    std::string line = "{\"id\":" + std::to_string(id) + ",\"op\":\"host\",\"name\":";
    JsonQuote(&line, name);
    line += ",\"args\":" + args + "}";
    // Bytes bound the host's count (UTF-16 units) from above: count only when they pass.
    if (line.size() > lim.max_chars) {
      size_t units = Utf16Units(line);
      if (units > lim.max_chars) {
        *refused = name + ": the call is " + Grouped(units) + " characters as JSON (" + MiB(units) +
                   "), over the host's cap of " + Grouped(lim.max_chars) + " characters (" + MiB(lim.max_chars) +
                   ") per host call; it was not sent. Write the data to a file in the session's roots and pass "
                   "its path instead.";
        return 0;
      }
    }
    {
      std::lock_guard<std::mutex> lk(*h_mu);
      (*h_calls)[id] = Call{job};
    }
    WireWrite(line);
    return id;
  }
  {
    std::lock_guard<std::mutex> lk(*h_mu);
    (*h_calls)[id] = Call{job};
  }
  auto ev = std::make_unique<Event>(kHostCall);
  ev->job = job;
  ev->call = id;
  ev->text = name;
  ev->detail = args;
  Post(std::move(ev));
  return id;
}

// On the interpreter thread in wire mode the wait reads the socket itself (the reply
// then wakes this thread directly instead of the reader thread first); any other
// thread sleeps on the condition variable.
int HostWait(const std::vector<uint64_t>& ids, bool interruptible, uint64_t* which, std::string* reply) {
  const bool reads = interruptible && WireOn();
  // The token first, then the check: a reply the reader thread dispatched before this
  // point is seen below, and none can be dispatched behind our back after it.
  if (reads) WireTakeToken();
  int rc;
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(*h_mu);
      if (CheckLocked(ids, interruptible, which, reply, &rc)) break;
      if (!reads) {
        h_cv->wait(lk);
        continue;
      }
    }
    WireIdle(false);
  }
  if (reads) WireGiveToken();  // Python runs again
  return rc;
}

bool HostReply(uint64_t call, const std::string& reply) {
  {
    std::lock_guard<std::mutex> lk(*h_mu);
    auto it = h_calls->find(call);
    if (it == h_calls->end() || it->second.done) return false;
    it->second.done = true;
    it->second.reply = reply;
  }
  h_cv->notify_all();
  return true;
}

// A job's calls die with it: JS gets a cancel (its AbortSignal fires), late replies drop.
void HostCancelJob(uint64_t job) {
  std::lock_guard<std::mutex> lk(*h_mu);
  for (auto it = h_calls->begin(); it != h_calls->end();) {
    if (it->second.job == job) {
      if (!it->second.done) PostCancel(job, it->first);
      it = h_calls->erase(it);
    } else {
      ++it;
    }
  }
}

void HostWakeAll() {
  { std::lock_guard<std::mutex> lk(*h_mu); }
  h_cv->notify_all();
  WireWake();
}

}  // namespace vis
