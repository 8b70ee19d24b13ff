// vis_confine.node: seccomp for the worker, installed in-process with TSYNC; openat2 and
// lgetxattr for the host, which node has no binding for.
// Deliberately free of Python symbols so it loads before (or without) libpython.
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <napi.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "seccomp_filter.h"

namespace {

bool OptionalBool(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  return v.IsBoolean() && v.As<Napi::Boolean>().Value();
}

// installSeccomp({ processes, network }) -> undefined; throws with code "confine.seccomp".
Napi::Value InstallSeccomp(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) {
    Napi::TypeError::New(env, "installSeccomp expects { processes: boolean, network: boolean }")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Object o = info[0].As<Napi::Object>();
  vis_seccomp_options opts{OptionalBool(o, "processes"), OptionalBool(o, "network")};
  long failed_tid = 0;
  int rc = vis_seccomp_install(&opts, &failed_tid);
  if (rc != 0) {
    std::string msg = "seccomp filter not installed: ";
    msg += failed_tid ? "thread " + std::to_string(failed_tid) + " could not be synchronised" : strerror(-rc);
    Napi::Error err = Napi::Error::New(env, msg);
    err.Set("code", Napi::String::New(env, "confine.seccomp"));
    err.ThrowAsJavaScriptException();
  }
  return env.Undefined();
}

// verifySeccomp() -> { ok, threads, unfiltered: number[] }: every thread must report "Seccomp: 2".
Napi::Value VerifySeccomp(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array unfiltered = Napi::Array::New(env);
  uint32_t threads = 0, bad = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) {
    Napi::Error::New(env, std::string("cannot list /proc/self/task: ") + strerror(errno)).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::string path = std::string("/proc/self/task/") + e->d_name + "/status";
    FILE* f = fopen(path.c_str(), "re");
    if (f == nullptr) continue;  // the thread exited while we listed
    threads++;
    int mode = -1;
    char line[256];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "Seccomp:", 8) == 0) {
        mode = atoi(line + 8);
        break;
      }
    }
    fclose(f);
    if (mode != 2) unfiltered.Set(bad++, Napi::Number::New(env, atoi(e->d_name)));
  }
  closedir(dir);
  Napi::Object out = Napi::Object::New(env);
  out.Set("ok", Napi::Boolean::New(env, bad == 0 && threads > 0));
  out.Set("threads", Napi::Number::New(env, threads));
  out.Set("unfiltered", unfiltered);
  return out;
}

Napi::Value SeccompAvailable(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), vis_seccomp_available() == 1);
}

// landlockAbi() -> number: the ABI version, or -errno (e.g. -38 ENOSYS, -95 EOPNOTSUPP).
Napi::Value LandlockAbi(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(vis_landlock_abi()));
}

// getXattr(path, name) -> Buffer | null: one extended attribute of path itself (never
// followed through a symlink). null when the file has no such attribute or its filesystem
// none at all. The drafts read overlayfs' markers (an opaque directory, a copy-up) with it:
// node has no xattr API.
Napi::Value GetXattr(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsString()) {
    Napi::TypeError::New(env, "getXattr expects (path: string, name: string)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string path = info[0].As<Napi::String>().Utf8Value();
  std::string name = info[1].As<Napi::String>().Utf8Value();
  for (;;) {
    ssize_t size = lgetxattr(path.c_str(), name.c_str(), nullptr, 0);
    if (size < 0) {
      if (errno == ENODATA || errno == ENOTSUP) return env.Null();
      int code = errno;
      Napi::Error err = Napi::Error::New(env, path + ": " + strerror(code));
      err.Set("errno", Napi::Number::New(env, code));
      err.ThrowAsJavaScriptException();
      return env.Undefined();
    }
    Napi::Buffer<char> out = Napi::Buffer<char>::New(env, static_cast<size_t>(size));
    ssize_t got = size == 0 ? 0 : lgetxattr(path.c_str(), name.c_str(), out.Data(), out.Length());
    if (got == size) return out;
    // Changed between the two calls (ERANGE: it grew): ask again.
    if (got < 0 && errno != ERANGE) {
      Napi::Error::New(env, path + ": " + strerror(errno)).ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
}

// openAt2(dirfd, path, flags, resolve, mode) -> fd: openat2(2), which node has no binding for.
// The host opens paths under trees the sandbox can write (a draft's upper directory, the real
// root, a draft seen through its mount holder) with RESOLVE_BENEATH / RESOLVE_IN_ROOT, so a
// symlink swapped in between a check and a use is never followed out of the tree. O_CLOEXEC
// is always added. Throws an Error with `errno` (and `syscall`) set; ENOSYS where the kernel
// predates openat2 (Linux 5.6).
Napi::Value OpenAt2(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 5 || !info[0].IsNumber() || !info[1].IsString() || !info[2].IsNumber() || !info[3].IsNumber() ||
      !info[4].IsNumber()) {
    Napi::TypeError::New(env,
                         "openAt2 expects (dirfd: number, path: string, flags: number, resolve: number, mode: number)")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int dirfd = info[0].As<Napi::Number>().Int32Value();
  std::string path = info[1].As<Napi::String>().Utf8Value();
  open_how how{};
  how.flags = static_cast<uint64_t>(info[2].As<Napi::Number>().Int64Value()) | O_CLOEXEC;
  how.resolve = static_cast<uint64_t>(info[3].As<Napi::Number>().Int64Value());
  // The kernel refuses a mode without O_CREAT or O_TMPFILE (EINVAL). O_TMPFILE includes
  // O_DIRECTORY's bit, so it is tested as a whole.
  if ((how.flags & O_CREAT) || (how.flags & O_TMPFILE) == O_TMPFILE)
    how.mode = static_cast<uint64_t>(info[4].As<Napi::Number>().Int64Value());
  long fd;
  // EAGAIN: a rename or mount raced the RESOLVE_BENEATH/IN_ROOT walk; the kernel asks for a retry.
  for (int tries = 0;; tries++) {
    fd = syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN || tries >= 16) break;
  }
  if (fd < 0) {
    int code = errno;
    Napi::Error err = Napi::Error::New(env, std::string("openat2: ") + strerror(code));
    err.Set("errno", Napi::Number::New(env, code));
    err.Set("syscall", Napi::String::New(env, "openat2"));
    err.ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Number::New(env, static_cast<double>(fd));
}

// peerPid(fd) -> pid: the process at the other end of a connected unix socket (SO_PEERCRED), as
// this process's pid namespace sees it (0 when it lies outside it). The owner socket
// (engine/ownership.ts) refuses a peer that runs in another user namespace: a jail's process.
Napi::Value PeerPid(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "peerPid expects (fd: number)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(info[0].As<Napi::Number>().Int32Value(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    int code = errno;
    Napi::Error err = Napi::Error::New(env, std::string("getsockopt(SO_PEERCRED): ") + strerror(code));
    err.Set("errno", Napi::Number::New(env, code));
    err.ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Number::New(env, static_cast<double>(cred.pid));
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("installSeccomp", Napi::Function::New(env, InstallSeccomp));
  exports.Set("verifySeccomp", Napi::Function::New(env, VerifySeccomp));
  exports.Set("seccompAvailable", Napi::Function::New(env, SeccompAvailable));
  exports.Set("landlockAbi", Napi::Function::New(env, LandlockAbi));
  exports.Set("getXattr", Napi::Function::New(env, GetXattr));
  exports.Set("openAt2", Napi::Function::New(env, OpenAt2));
  exports.Set("peerPid", Napi::Function::New(env, PeerPid));
  return exports;
}

}  // namespace

NODE_API_MODULE(vis_confine, Init)
