// Captured output: chunks in write order (both streams in one list, so their relative
// order survives), flushed to JS on a newline after >=10 ms, at 16 KiB, at job end,
// and by the ticker for partial lines. The ticker thread also re-sends interrupts.
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "runtime.h"

namespace vis {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kFlushBytes = 16 * 1024;
constexpr auto kNewlineGap = std::chrono::milliseconds(10);
constexpr auto kPartialAge = std::chrono::milliseconds(25);
constexpr auto kTick = std::chrono::milliseconds(10);
// takeOutput() keeps at most this much of a job's undrained output (the newest part),
// so a job nobody drains cannot grow the process without bound.
constexpr size_t kTakeKeep = 8 * 1024 * 1024;

struct OutputState {
  std::mutex mu;
  std::vector<Chunk> pending;
  size_t pending_bytes = 0;
  Clock::time_point first_pending;
  Clock::time_point last_flush;
  uint64_t job = 0;
  std::string taken_out, taken_err;  // what takeOutput() has not drained yet
};
OutputState* g_out = new OutputState;

std::mutex* tick_mu = new std::mutex;
std::condition_variable* tick_cv = new std::condition_variable;
bool tick_flag = false;

void FlushLocked(Clock::time_point now) {
  g_out->last_flush = now;
  if (g_out->pending.empty()) return;
  g_out->pending_bytes = 0;
  if (IsWireJob(g_out->job)) {
    WireOutput(g_out->job, g_out->pending);
    g_out->pending.clear();
    return;
  }
  auto ev = std::make_unique<Event>(kOutput);
  ev->job = g_out->job;
  ev->chunks.swap(g_out->pending);
  Post(std::move(ev));  // under the lock: events reach the queue in write order
}

bool OutputTick() {
  std::lock_guard<std::mutex> lk(g_out->mu);
  if (g_out->pending.empty()) return false;
  auto now = Clock::now();
  if (now - g_out->first_pending >= kPartialAge) {
    FlushLocked(now);
    return false;
  }
  return true;
}

void TickerMain() {
  for (;;) {
    bool active = OutputTick();
    active = InterruptTick() || active;
    std::unique_lock<std::mutex> lk(*tick_mu);
    if (active) {
      tick_cv->wait_for(lk, kTick, [] { return tick_flag; });
    } else {
      tick_cv->wait(lk, [] { return tick_flag; });
    }
    tick_flag = false;
  }
}

}  // namespace

void TickerStart() { std::thread(TickerMain).detach(); }

void TickerWake() {
  {
    std::lock_guard<std::mutex> lk(*tick_mu);
    tick_flag = true;
  }
  tick_cv->notify_one();
}

void OutputWrite(int stream, const char* data, size_t len) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lk(g_out->mu);
    auto now = Clock::now();
    if (g_out->pending.empty()) {
      g_out->first_pending = now;
      wake = true;
    }
    if (!g_out->pending.empty() && g_out->pending.back().stream == stream) {
      g_out->pending.back().text.append(data, len);
    } else {
      g_out->pending.push_back(Chunk{stream, std::string(data, len)});
    }
    g_out->pending_bytes += len;
    if (g_out->job != 0) {
      std::string& taken = stream == 1 ? g_out->taken_out : g_out->taken_err;
      taken.append(data, len);
      if (taken.size() > 2 * kTakeKeep) taken.erase(0, taken.size() - kTakeKeep);
    }
    bool newline = memchr(data, '\n', len) != nullptr;
    if (g_out->pending_bytes >= kFlushBytes || (newline && now - g_out->last_flush >= kNewlineGap)) {
      FlushLocked(now);
      wake = false;
    }
  }
  if (wake) TickerWake();
}

void OutputFlush() {
  std::lock_guard<std::mutex> lk(g_out->mu);
  FlushLocked(Clock::now());
}

void OutputJobStart(uint64_t job) {
  std::lock_guard<std::mutex> lk(g_out->mu);
  FlushLocked(Clock::now());  // whatever idle threads printed belongs to no job
  g_out->job = job;
  g_out->taken_out.clear();
  g_out->taken_err.clear();
}

void OutputJobEnd() {
  std::lock_guard<std::mutex> lk(g_out->mu);
  FlushLocked(Clock::now());
  g_out->job = 0;
  g_out->taken_out.clear();
  g_out->taken_err.clear();
}

bool OutputTake(uint64_t job, std::string* out, std::string* err) {
  std::lock_guard<std::mutex> lk(g_out->mu);
  if (g_out->job == 0 || (job != 0 && job != g_out->job)) return false;
  out->swap(g_out->taken_out);
  err->swap(g_out->taken_err);
  g_out->taken_out.clear();
  g_out->taken_err.clear();
  return true;
}

}  // namespace vis
