// Host calls: the guest asks JS for something by name and waits (GIL released) on a
// condition variable that both the reply and an interrupt notify, since signals do
// not wake futex waits.
#include <condition_variable>
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
  auto* ev = new Event{kHostCancel};
  ev->job = job;
  ev->call = call;
  Post(ev);
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

}  // namespace

uint64_t HostSend(const std::string& name, const std::string& args) {
  uint64_t id = ++h_next;
  uint64_t job = g_current_job.load();
  {
    std::lock_guard<std::mutex> lk(*h_mu);
    (*h_calls)[id] = Call{job};
  }
  if (IsWireJob(job)) {
    if (!WireJsonValue(args)) {
      HostReply(id, "{\"ok\":false,\"error\":{\"code\":\"host.bad-args\",\"message\":\"args_json is not JSON\"}}");
      return id;
    }
    std::string line = "{\"id\":" + std::to_string(id) + ",\"op\":\"host\",\"name\":";
    JsonQuote(&line, name);
    line += ",\"args\":" + args + "}";
    WireWrite(line);
    return id;
  }
  auto* ev = new Event{kHostCall};
  ev->job = job;
  ev->call = id;
  ev->a = name;
  ev->b = args;
  Post(ev);
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
