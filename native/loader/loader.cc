// The loader addon: no Python symbols at all, so it can be required before any
// libpython is present. It makes libpython globally visible (RTLD_NOW|RTLD_GLOBAL)
// so that the per-minor runtime addon, required afterwards, binds its data
// references (Py_None, PyExc_*) to it, and stdlib extension modules find it too.
#include <dlfcn.h>
#include <napi.h>

#include <string>

#include "ping.h"

namespace {

void* g_handle = nullptr;
std::string g_path;

Napi::Value Load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    throw Napi::TypeError::New(env, "load(libpythonPath: string)");
  }
  std::string path = info[0].As<Napi::String>();
  if (g_handle != nullptr) {
    if (path == g_path) return Napi::Boolean::New(env, false);
    throw Napi::Error::New(env, "libpython already loaded from " + g_path + "; one Python per process");
  }
  dlerror();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) {
    const char* err = dlerror();
    throw Napi::Error::New(env, std::string("dlopen failed: ") + (err ? err : "unknown error"));
  }
  g_handle = h;
  g_path = path;
  return Napi::Boolean::New(env, true);
}

// Py_GetVersion is safe before Py_Initialize: it only formats compile-time strings.
Napi::Value Version(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (g_handle == nullptr) throw Napi::Error::New(env, "no libpython loaded");
  using GetVersion = const char* (*)();
  auto fn = reinterpret_cast<GetVersion>(dlsym(g_handle, "Py_GetVersion"));
  if (fn == nullptr) throw Napi::Error::New(env, "Py_GetVersion not found in " + g_path);
  return Napi::String::New(env, fn());
}

Napi::Value LoadedPath(const Napi::CallbackInfo& info) {
  if (g_handle == nullptr) return info.Env().Null();
  return Napi::String::New(info.Env(), g_path);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("load", Napi::Function::New(env, Load));
  exports.Set("version", Napi::Function::New(env, Version));
  exports.Set("loadedPath", Napi::Function::New(env, LoadedPath));
  RegisterPing(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(vis_loader, Init)
