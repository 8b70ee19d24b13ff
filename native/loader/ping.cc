// A bare thread-safe-function ping with no Python: the baseline the runtime's round
// trips are compared against (JS -> native thread -> JS through the same mechanisms:
// mutex+condvar wake-up there, NonBlockingCall back).
#include "ping.h"

#include <napi.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace {

struct PingState {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t requested = 0;
  Napi::ThreadSafeFunction tsfn;
};
PingState* g_ping = nullptr;  // never freed, like the runtime's queue

void PingThread() {
  uint64_t served = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(g_ping->mu);
      g_ping->cv.wait(lk, [&] { return g_ping->requested > served; });
      served = g_ping->requested;
    }
    auto* n = new double(static_cast<double>(served));
    g_ping->tsfn.NonBlockingCall(n, [](Napi::Env env, Napi::Function fn, double* v) {
      double x = *v;
      delete v;
      if (env == nullptr) return;
      try {
        fn.Call({Napi::Number::New(env, x)});
      } catch (const Napi::Error& e) {
        try {
          e.ThrowAsJavaScriptException();
        } catch (...) {
          // the environment is shutting down: nobody is left to tell
        }
      }
    });
  }
}

// pingStart(onPong): starts the thread; the function stays unref'd (benchmarks only).
Napi::Value PingStart(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (g_ping != nullptr) throw Napi::Error::New(env, "ping already started");
  g_ping = new PingState;
  g_ping->tsfn = Napi::ThreadSafeFunction::New(env, info[0].As<Napi::Function>(), "vis-ping", 0, 1);
  g_ping->tsfn.Unref(env);
  std::thread(PingThread).detach();
  return env.Undefined();
}

Napi::Value Ping(const Napi::CallbackInfo& info) {
  {
    std::lock_guard<std::mutex> lk(g_ping->mu);
    g_ping->requested++;
  }
  g_ping->cv.notify_one();
  return info.Env().Undefined();
}

}  // namespace

void RegisterPing(Napi::Env env, Napi::Object exports) {
  exports.Set("pingStart", Napi::Function::New(env, PingStart));
  exports.Set("ping", Napi::Function::New(env, Ping));
}
