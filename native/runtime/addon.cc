// N-API surface of the runtime addon. The JS thread only queues work, signals
// interrupts and hands over host-call replies; every Py* call happens on the
// interpreter thread (interp.cc). Events come back through one thread-safe function.
#include <napi.h>
#include <signal.h>

#include "runtime.h"

#ifndef VIS_PY_MINOR
#error "VIS_PY_MINOR must name the Python minor this addon is compiled for"
#endif

// A marker the host reads from the file's bytes BEFORE require(): loading an addon
// built for another minor binds the wrong PyConfig layout and can crash the process,
// so a mislabelled prebuild must be refused without loading it (src/native/addon.ts).
extern "C" __attribute__((used, visibility("default"))) const char vis_py_minor_marker[] =
    "vis-python-minor=" VIS_PY_MINOR ";";

namespace vis {

namespace {

Napi::ThreadSafeFunction* g_tsfn = nullptr;  // never freed: the interpreter thread may outlive the env
bool g_started = false;

void CallJs(Napi::Env env, Napi::Function fn, Event* raw) {
  std::unique_ptr<Event> ev(raw);
  if (env == nullptr || fn == nullptr) return;
  Napi::Value payload;
  if (ev->kind == kOutput) {
    Napi::Array chunks = Napi::Array::New(env, ev->chunks.size());
    for (size_t i = 0; i < ev->chunks.size(); i++) {
      Napi::Array c = Napi::Array::New(env, 2);
      c.Set(0u, Napi::Number::New(env, ev->chunks[i].stream));
      c.Set(1u, Napi::String::New(env, ev->chunks[i].text));
      chunks.Set(static_cast<uint32_t>(i), c);
    }
    payload = chunks;
  } else {
    payload = Napi::String::New(env, ev->detail);
  }
  std::initializer_list<napi_value> args = {
      Napi::Number::New(env, ev->kind), Napi::Number::New(env, static_cast<double>(ev->job)),
      Napi::Number::New(env, static_cast<double>(ev->call)), Napi::String::New(env, ev->text), payload};
  ev.reset();
  try {
    fn.Call(args);
  } catch (const Napi::Error& e) {
    // A throwing listener surfaces as an uncaught JS exception, not std::terminate.
    try {
      e.ThrowAsJavaScriptException();
    } catch (...) {
      // the environment is shutting down: nobody is left to tell
    }
  }
}

std::vector<std::string> Strings(Napi::Value v) {
  std::vector<std::string> out;
  if (!v.IsArray()) return out;
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) out.push_back(a.Get(i).As<Napi::String>());
  return out;
}

uint64_t Id(const Napi::Value& v) {
  if (!v.IsNumber()) return 0;
  double d = v.As<Napi::Number>().DoubleValue();
  return d > 0 ? static_cast<uint64_t>(d) : 0;
}

// start({home, executable, readRoots, sysPath, argv, capture, audit}, onEvent)
Napi::Value Start(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (g_started) throw Napi::Error::New(env, "the interpreter was already started in this process");
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsFunction())
    throw Napi::TypeError::New(env, "start(options, onEvent)");
  Napi::Object o = info[0].As<Napi::Object>();
  StartOptions opts;
  opts.home = o.Get("home").As<Napi::String>();
  opts.distRoot = o.Get("distRoot").As<Napi::String>();
  opts.executable = o.Get("executable").As<Napi::String>();
  opts.readRoots = Strings(o.Get("readRoots"));
  opts.sysPath = Strings(o.Get("sysPath"));
  opts.argv = Strings(o.Get("argv"));
  opts.capture = o.Get("capture").ToBoolean();
  opts.audit = o.Get("audit").ToBoolean();
  opts.cli = o.Get("cli").ToBoolean();
  if (o.Get("interruptSignal").IsNumber()) opts.interruptSignal = o.Get("interruptSignal").As<Napi::Number>();
  g_tsfn = new Napi::ThreadSafeFunction(
      Napi::ThreadSafeFunction::New(env, info[1].As<Napi::Function>(), "vis-python", 0, 1));
  g_started = true;
  StartInterpreter(opts);
  return env.Undefined();
}

// submit(kind, id, a, b, c): what the three strings hold depends on the kind, as
// src/native/runtime.ts passes them; the job names each one.
Napi::Value SubmitJob(const Napi::CallbackInfo& info) {
  if (!g_started) throw Napi::Error::New(info.Env(), "the interpreter is not started");
  auto job = std::make_unique<Job>();
  job->kind = static_cast<JobKind>(info[0].As<Napi::Number>().Int32Value());
  job->id = Id(info[1]);
  std::string a = info[2].As<Napi::String>();
  std::string b = info[3].As<Napi::String>();
  std::string c = info[4].As<Napi::String>();
  switch (job->kind) {
    case kExec:
    case kMain:
      job->source = std::move(a);
      job->file = std::move(b);
      job->ns = std::move(c);
      break;
    case kEval:
      job->source = std::move(a);
      job->ns = std::move(b);
      break;
    case kCompile:
      job->source = std::move(a);
      job->file = std::move(b);
      break;
    case kCall:
      job->module = std::move(a);
      job->function = std::move(b);
      job->args_json = std::move(c);
      break;
    case kRunModule: job->module = std::move(a); break;
    case kRepl:
      job->banner = a == "1";
      job->startup = b == "1";
      break;
    case kFinalize:
    case kWire: break;
  }
  Submit(std::move(job));
  return info.Env().Undefined();
}

Napi::Value InterruptJob(const Napi::CallbackInfo& info) {
  if (!g_started) return Napi::Boolean::New(info.Env(), false);
  return Napi::Boolean::New(info.Env(), Interrupt(info.Length() > 0 ? Id(info[0]) : 0));
}

Napi::Value HostReplyJs(const Napi::CallbackInfo& info) {
  std::string reply = info[1].As<Napi::String>();
  bool ok = HostReply(Id(info[0]), reply);
  if (ok) WireWake();  // an interpreter thread reading the wire does not see the condvar
  return Napi::Boolean::New(info.Env(), ok);
}

Napi::Value TakeOutput(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string out, err;
  if (!OutputTake(info.Length() > 0 ? Id(info[0]) : 0, &out, &err)) return env.Null();
  Napi::Object r = Napi::Object::New(env);
  r.Set("stdout", Napi::String::New(env, out));
  r.Set("stderr", Napi::String::New(env, err));
  return r;
}

Napi::Value InstallPolicy(const Napi::CallbackInfo& info) {
  Napi::Object o = info[0].As<Napi::Object>();
  Policy p;
  p.readOnly = Strings(o.Get("readOnly"));
  p.readWrite = Strings(o.Get("readWrite"));
  p.readOnlyRoots = Strings(o.Get("readOnlyRoots"));
  if (o.Get("readOnlyWhy").IsString()) p.readOnlyWhy = o.Get("readOnlyWhy").As<Napi::String>();
  p.network = o.Get("network").ToBoolean();
  p.allowAll = !o.Get("allow").IsArray();
  p.allow = Strings(o.Get("allow"));
  p.processes = o.Get("processes").ToBoolean();
  p.ctypes = o.Get("ctypes").ToBoolean();
  AuditSetPolicy(p);
  return info.Env().Undefined();
}

// setWriteRefusal(why): while non-empty, writes that could grow the roots are refused with it.
Napi::Value SetWriteRefusal(const Napi::CallbackInfo& info) {
  AuditSetWriteRefusal(info[0].As<Napi::String>());
  return info.Env().Undefined();
}

// wireStart(fd, workOps, module, fn, limits?): see wire.cc. Lines it does not handle
// arrive as kWireMessage events; the socket closing as kWireClosed. limits
// ({maxFrameChars, maxDepth}) are the host's frame caps, applied to outgoing host calls;
// limits.spinUs is how long an idle interpreter thread polls before it sleeps.
Napi::Value WireStartJs(const Napi::CallbackInfo& info) {
  if (!g_started) throw Napi::Error::New(info.Env(), "the interpreter is not started");
  int fd = info[0].As<Napi::Number>().Int32Value();
  std::string module = info[2].As<Napi::String>();
  std::string fn = info[3].As<Napi::String>();
  WireLimits limits;
  if (info.Length() > 4 && info[4].IsObject()) {
    Napi::Object o = info[4].As<Napi::Object>();
    if (o.Get("maxFrameChars").IsNumber()) limits.max_chars = o.Get("maxFrameChars").As<Napi::Number>().Int64Value();
    if (o.Get("maxDepth").IsNumber()) limits.max_depth = o.Get("maxDepth").As<Napi::Number>().Int32Value();
    if (o.Get("spinUs").IsNumber()) limits.spin_ns = o.Get("spinUs").As<Napi::Number>().Int64Value() * 1000;
  }
  if (!WireStart(fd, Strings(info[1]), module, fn, limits))
    throw Napi::Error::New(info.Env(), "wire mode is already on");
  return info.Env().Undefined();
}

Napi::Value WireWriteJs(const Napi::CallbackInfo& info) {
  std::string line = info[0].As<Napi::String>();
  return Napi::Boolean::New(info.Env(), WireWrite(line));
}

Napi::Value Ref(const Napi::CallbackInfo& info) {
  if (g_tsfn != nullptr) g_tsfn->Ref(info.Env());
  return info.Env().Undefined();
}

Napi::Value Unref(const Napi::CallbackInfo& info) {
  if (g_tsfn != nullptr) g_tsfn->Unref(info.Env());
  return info.Env().Undefined();
}

Napi::Value Minor(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), VIS_PY_MINOR); }

Napi::Value SignalNumber(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), SIGRTMIN + 3); }

}  // namespace

Napi::Object InitExports(Napi::Env env, Napi::Object exports) {
  exports.Set("pythonMinor", Napi::Function::New(env, Minor));
  exports.Set("interruptSignal", Napi::Function::New(env, SignalNumber));
  exports.Set("start", Napi::Function::New(env, Start));
  exports.Set("submit", Napi::Function::New(env, SubmitJob));
  exports.Set("interrupt", Napi::Function::New(env, InterruptJob));
  exports.Set("hostReply", Napi::Function::New(env, HostReplyJs));
  exports.Set("takeOutput", Napi::Function::New(env, TakeOutput));
  exports.Set("installPolicy", Napi::Function::New(env, InstallPolicy));
  exports.Set("setWriteRefusal", Napi::Function::New(env, SetWriteRefusal));
  exports.Set("wireStart", Napi::Function::New(env, WireStartJs));
  exports.Set("wireWrite", Napi::Function::New(env, WireWriteJs));
  exports.Set("ref", Napi::Function::New(env, Ref));
  exports.Set("unref", Napi::Function::New(env, Unref));
  return exports;
}

void Post(std::unique_ptr<Event> ev) {
  if (g_tsfn == nullptr) return;
  Event* raw = ev.release();
  if (g_tsfn->NonBlockingCall(raw, CallJs) != napi_ok) delete raw;  // never queued: still ours
}

}  // namespace vis

static Napi::Object InitRuntime(Napi::Env env, Napi::Object exports) { return vis::InitExports(env, exports); }

NODE_API_MODULE(vis_runtime, InitRuntime)
