// The running block's sys.stdin: `stdin` requests the host sends for a wire job are
// queued here as their raw lines (the guest decodes them), and the guest's reader blocks
// on a condition variable that both new input and an interrupt notify.
#include <condition_variable>
#include <deque>
#include <mutex>

#include "runtime.h"

namespace vis {

namespace {

// Input the block has not read yet is capped, so a host cannot grow the worker unboundedly.
constexpr size_t kMaxBuffered = 4 * 1024 * 1024;

struct Pending {
  uint64_t job;
  std::string line;
};

struct StdinState {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Pending> lines;
  size_t bytes = 0;
  uint64_t running = 0;   // the wire job now running
  uint64_t finished = 0;  // the newest wire job that has ended
};
StdinState* g_in = new StdinState;

}  // namespace

int StdinFeed(uint64_t job, std::string&& line, size_t* buffered) {
  {
    std::lock_guard<std::mutex> lk(g_in->mu);
    if (job <= g_in->finished) return 1;
    *buffered = g_in->bytes;
    if (g_in->bytes + line.size() > kMaxBuffered) return 2;
    g_in->bytes += line.size();
    *buffered = g_in->bytes;
    g_in->lines.push_back(Pending{job, std::move(line)});
  }
  g_in->cv.notify_all();
  return 0;
}

int StdinWait(std::string* line) {
  std::unique_lock<std::mutex> lk(g_in->mu);
  for (;;) {
    uint64_t job = g_in->running;
    if (job == 0 || job != g_current_job.load()) return 2;
    for (auto it = g_in->lines.begin(); it != g_in->lines.end(); ++it) {
      if (it->job == job) {
        g_in->bytes -= it->line.size();
        line->swap(it->line);
        g_in->lines.erase(it);
        return 0;
      }
    }
    if (InterruptPending()) return 1;
    g_in->cv.wait(lk);
  }
}

// Input sent ahead of the job's start (the host may send it right after run-block) waits.
void StdinJobStart(uint64_t job) {
  std::lock_guard<std::mutex> lk(g_in->mu);
  g_in->running = job;
}

void StdinJobEnd(uint64_t job) {
  {
    std::lock_guard<std::mutex> lk(g_in->mu);
    if (job > g_in->finished) g_in->finished = job;
    g_in->running = 0;
    for (auto it = g_in->lines.begin(); it != g_in->lines.end();) {
      if (it->job <= g_in->finished) {
        g_in->bytes -= it->line.size();
        it = g_in->lines.erase(it);
      } else {
        ++it;
      }
    }
  }
  g_in->cv.notify_all();
}

void StdinWakeAll() {
  { std::lock_guard<std::mutex> lk(g_in->mu); }
  g_in->cv.notify_all();
}

}  // namespace vis
