// The audit hook: early, readable refusals (the OS jail is the boundary). Until a
// policy arrives it fails closed: reads only under the distribution, the guest
// runtime and the sys.path entries the host named; no writes, sockets, processes,
// ctypes or foreign native extensions.
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>

#include "runtime.h"

namespace vis {

namespace {

// Immutable once published: a hook reads a snapshot and holds no lock while it runs
// Python-level code (__fspath__), which could re-enter the hook or switch threads.
struct AuditConfig {
  std::vector<std::string> base_reads;
  std::string dist;
  std::string dist_given;  // as configured (code objects carry this spelling of the path)
  bool has_policy = false;
  Policy policy;
};
std::shared_ptr<const AuditConfig>* g_config = new std::shared_ptr<const AuditConfig>;
thread_local const AuditConfig* t_cfg = nullptr;  // the snapshot of the running hook

// Addresses of allowed host names, learned at getaddrinfo; only touched under ips_mu.
std::mutex* g_ips_mu = new std::mutex;
std::set<std::string>* g_ips = new std::set<std::string>;

bool KnownAddress(const std::string& key) {
  std::lock_guard<std::mutex> lk(*g_ips_mu);
  return g_ips->count(key) != 0;
}

enum Access { kRead, kWrite };

bool Under(const std::string& path, const std::string& root) {
  if (root.empty()) return false;
  if (root == "/") return true;
  return path.size() >= root.size() && path.compare(0, root.size(), root) == 0 &&
         (path.size() == root.size() || path[root.size()] == '/');
}

bool UnderAny(const std::string& path, const std::vector<std::string>& roots) {
  return std::any_of(roots.begin(), roots.end(), [&](const std::string& r) { return Under(path, r); });
}

// Absolute, symlink-free form of a path that may not exist yet. A missing final
// component is resolved through its parent; a dangling symlink is followed; anything
// unresolvable ("missing/..") yields false and is denied.
bool Resolve(const std::string& in, std::string* out, int depth = 0) {
  if (in.empty() || depth > 40) return false;
  std::string p = in;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  char buf[PATH_MAX];
  if (realpath(p.c_str(), buf) != nullptr) {
    *out = buf;
    return true;
  }
  size_t slash = p.rfind('/');
  if (slash == std::string::npos) return false;
  std::string parent = slash == 0 ? "/" : p.substr(0, slash);
  std::string base = p.substr(slash + 1);
  if (base.empty() || base == "." || base == "..") return false;
  std::string rp;
  if (!Resolve(parent, &rp, depth + 1)) return false;
  std::string candidate = (rp == "/" ? "" : rp) + "/" + base;
  struct stat st;
  if (lstat(candidate.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    ssize_t n = readlink(candidate.c_str(), buf, sizeof(buf) - 1);
    if (n < 0) return false;
    std::string target(buf, static_cast<size_t>(n));
    if (target.empty()) return false;
    if (target[0] != '/') target = (rp == "/" ? "" : rp) + "/" + target;
    return Resolve(target, out, depth + 1);
  }
  *out = candidate;
  return true;
}

// The path itself, its last component not followed: unlink and rename act on a symlink, never
// on what it points to, so a link in a root may go whatever its target. The directory it sits
// in is resolved in full (a parent that is a link to outside stays outside). A trailing slash,
// "." or ".." name a directory through the link: those resolve as usual.
bool ResolveNoFollow(const std::string& in, std::string* out) {
  size_t slash = in.rfind('/');
  if (in.empty() || slash == std::string::npos || slash + 1 == in.size()) return Resolve(in, out);
  std::string base = in.substr(slash + 1);
  if (base == "." || base == "..") return Resolve(in, out);
  std::string rp;
  if (!Resolve(slash == 0 ? "/" : in.substr(0, slash), &rp)) return false;
  *out = (rp == "/" ? "" : rp) + "/" + base;
  return true;
}

// Set while the session is past its disk budget (src/sessions/disk-budget.ts): why writes
// that could grow the roots are refused. Deleting, renaming and truncating stay allowed.
std::shared_ptr<const std::string>* g_write_refusal = new std::shared_ptr<const std::string>;

// The path argument as bytes; false (with no error) when it is not a path (fd, None).
bool PathArg(PyObject* args, Py_ssize_t i, std::string* out) {
  if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) <= i) return false;
  PyObject* o = PyTuple_GET_ITEM(args, i);
  if (o == Py_None || PyLong_Check(o)) return false;
  PyObject* p = PyOS_FSPath(o);
  if (p == nullptr) {
    PyErr_Clear();
    return false;
  }
  PyRef fspath(p);
  PyRef bytes = PyUnicode_Check(p) ? PyRef(PyUnicode_EncodeFSDefault(p)) : PyRef::Borrow(p);
  if (!bytes || !PyBytes_Check(bytes.get())) {
    PyErr_Clear();
    return false;
  }
  out->assign(PyBytes_AS_STRING(bytes.get()), static_cast<size_t>(PyBytes_GET_SIZE(bytes.get())));
  return true;
}

// A relative path with a dir_fd is relative to that directory, not the cwd.
std::string BaseDir(PyObject* args, Py_ssize_t dirfd_index) {
  if (dirfd_index >= 0 && PyTuple_Check(args) && PyTuple_GET_SIZE(args) > dirfd_index) {
    PyObject* fd = PyTuple_GET_ITEM(args, dirfd_index);
    if (PyLong_Check(fd)) {
      long v = PyLong_AsLong(fd);
      PyErr_Clear();
      if (v >= 0) {
        char buf[PATH_MAX];
        std::string link = "/proc/self/fd/" + std::to_string(v);
        ssize_t n = readlink(link.c_str(), buf, sizeof(buf) - 1);
        if (n > 0) return std::string(buf, static_cast<size_t>(n));
        return "";
      }
    }
  }
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof(cwd)) ? std::string(cwd) : std::string();
}

int Deny(const std::string& msg) {
  PyErr_SetString(PyExc_PermissionError, ("vis: " + msg).c_str());
  return -1;
}

const char* kNoPolicy = " (no sandbox policy is installed yet)";

// Lock held by the caller.
int CheckPath(Access access, const std::string& raw, const std::string& base, const char* event, bool follow = true) {
  std::string abs = raw.empty() || raw[0] == '/' ? raw : base + "/" + raw;
  if (raw.empty()) abs = base;
  std::string resolved;
  const char* verb = access == kRead ? "reading" : "writing";
  if (abs.empty() || abs[0] != '/' || !(follow ? Resolve(abs, &resolved) : ResolveNoFollow(abs, &resolved))) {
    return Deny(std::string(verb) + " '" + raw + "' is not allowed: the path cannot be resolved (" + event + ")");
  }
  const Policy& p = t_cfg->policy;
  if (access == kRead) {
    if (UnderAny(resolved, t_cfg->base_reads)) return 0;
    if (t_cfg->has_policy && (UnderAny(resolved, p.readOnly) || UnderAny(resolved, p.readWrite))) return 0;
  } else if (t_cfg->has_policy && UnderAny(resolved, p.readWrite)) {
    return 0;
  }
  std::string shown = resolved == raw ? "'" + raw + "'" : "'" + raw + "' (resolves to '" + resolved + "')";
  std::string why = !t_cfg->has_policy ? std::string(kNoPolicy)
                    : access == kRead  ? ": it is outside the readable roots"
                    : UnderAny(resolved, p.readOnlyRoots) && !p.readOnlyWhy.empty()
                        ? ": " + p.readOnlyWhy
                        : ": it is outside the read-write roots";
  return Deny(std::string(verb) + " " + shown + " is not allowed" + why + " [" + event + "]");
}

int CheckArgPath(PyObject* args, Py_ssize_t i, Access access, Py_ssize_t dirfd, const char* event, bool follow = true) {
  std::string raw;
  if (!PathArg(args, i, &raw)) return 0;
  return CheckPath(access, raw, BaseDir(args, raw.empty() || raw[0] == '/' ? -1 : dirfd), event, follow);
}

// A write that can make the roots grow, refused while the session is past its disk budget
// (checked after the path passed, so a refusal for the path itself keeps its own message).
int CheckGrowth(PyObject* args, Py_ssize_t i, const char* event) {
  std::shared_ptr<const std::string> why = std::atomic_load(g_write_refusal);
  if (!why || why->empty()) return 0;
  std::string raw;
  std::string what = PathArg(args, i, &raw) ? "writing '" + raw + "'" : std::string("writing");
  return Deny(what + " is not allowed: " + *why + " [" + event + "]");
}

// Everyday device files every jail shows (src/confinement/sandbox-args.ts): opened for data
// only; their metadata stays outside every root.
bool DeviceOpen(PyObject* args, bool writes) {
  std::string raw;
  if (!t_cfg->has_policy || !PathArg(args, 0, &raw)) return false;
  for (const char* d : {"/dev/null", "/dev/zero", "/dev/full"})
    if (raw == d) return true;
  return !writes && (raw == "/dev/urandom" || raw == "/dev/random");
}

// A regular file with more than one hard link may share its inode with a file outside the
// roots (a link planted there): writing it, or its metadata, through the root would change
// that file too. Checked after the path check passed; a missing file has no links yet.
int CheckLinks(PyObject* args, Py_ssize_t i, Py_ssize_t dirfd, const char* event) {
  std::string raw, resolved;
  if (!PathArg(args, i, &raw)) return 0;
  std::string base = BaseDir(args, raw.empty() || raw[0] == '/' ? -1 : dirfd);
  std::string abs = raw.empty() || raw[0] == '/' ? raw : base + "/" + raw;
  struct stat st;
  if (!Resolve(abs, &resolved) || stat(resolved.c_str(), &st) != 0) return 0;
  if (!S_ISREG(st.st_mode) || st.st_nlink <= 1) return 0;
  return Deny("writing '" + raw + "' is not allowed: it has " + std::to_string(st.st_nlink) +
              " hard links, and a write through the root would also change the other links, which may be "
              "outside the roots; write a new file (or remove the other links) instead [" +
              event + "]");
}

int CheckWriteArg(PyObject* args, Py_ssize_t i, Py_ssize_t dirfd, const char* event) {
  if (CheckArgPath(args, i, kWrite, dirfd, event) != 0) return -1;
  return CheckLinks(args, i, dirfd, event);
}

// A readable refusal for set-id bits; the boundary is the seccomp filter, which refuses them
// whatever calls chmod (native code, the shell): files in a root keep the bit on the host, where
// the roots are not mounted nosuid.
int SetIdMode(PyObject* args, Py_ssize_t i, const char* event) {
  if (PyTuple_GET_SIZE(args) <= i || !PyLong_Check(PyTuple_GET_ITEM(args, i))) return 0;
  long mode = PyLong_AsLong(PyTuple_GET_ITEM(args, i));
  if (mode == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  if ((mode & (S_ISUID | S_ISGID)) == 0) return 0;
  char octal[32];
  snprintf(octal, sizeof octal, "0o%lo", mode & 07777);
  return Deny(std::string("setting the set-user-ID or set-group-ID bit (mode ") + octal +
              ") is not allowed: a file in a root would keep it outside the sandbox; use a mode without 0o6000 [" +
              event + "]");
}

bool ModeWrites(PyObject* args) {
  if (PyTuple_GET_SIZE(args) > 1) {
    PyObject* mode = PyTuple_GET_ITEM(args, 1);
    if (PyUnicode_Check(mode)) {
      const char* m = PyUnicode_AsUTF8(mode);
      if (m == nullptr) {
        PyErr_Clear();
        return true;
      }
      if (strpbrk(m, "wax+") != nullptr) return true;
    }
  }
  if (PyTuple_GET_SIZE(args) > 2) {
    PyObject* flags = PyTuple_GET_ITEM(args, 2);
    if (PyLong_Check(flags)) {
      long f = PyLong_AsLong(flags);
      PyErr_Clear();
      if (f & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)) return true;
    }
  }
  return false;
}

// *granted is the port the matching entry allows (-1 for any).
bool HostAllowed(const std::string& host, long port, long* granted) {
  const Policy& p = t_cfg->policy;
  *granted = -1;
  if (p.allowAll) return true;
  std::string h = host;
  std::transform(h.begin(), h.end(), h.begin(), ::tolower);
  if (KnownAddress(h)) return true;
  if (port >= 0 && KnownAddress(h + ":" + std::to_string(port))) return true;
  for (const auto& e : p.allow) {
    std::string eh = e;
    long eport = -1;
    size_t colon = e.rfind(':');
    if (colon != std::string::npos && e.find(':') == colon) {
      eh = e.substr(0, colon);
      eport = atol(e.c_str() + colon + 1);
    }
    if (eport >= 0 && port >= 0 && eport != port) continue;
    bool match = eh == "*" || eh == h ||
                 (eh.size() > 2 && eh[0] == '*' && eh[1] == '.' && h.size() > eh.size() - 1 &&
                  h.compare(h.size() - (eh.size() - 1), eh.size() - 1, eh, 1, std::string::npos) == 0);
    if (match) {
      *granted = eport;
      return true;
    }
  }
  return false;
}

// Remember where an allowed name resolves, so the connect to that address passes.
void LearnAddresses(const std::string& host, long port) {
  struct addrinfo* res = nullptr;
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = getaddrinfo(host.c_str(), nullptr, nullptr, &res);
  Py_END_ALLOW_THREADS;
  if (rc != 0) return;
  std::lock_guard<std::mutex> lk(*g_ips_mu);
  for (auto* ai = res; ai != nullptr; ai = ai->ai_next) {
    char buf[NI_MAXHOST];
    if (getnameinfo(ai->ai_addr, ai->ai_addrlen, buf, sizeof(buf), nullptr, 0, NI_NUMERICHOST) == 0)
      g_ips->insert(port >= 0 ? std::string(buf) + ":" + std::to_string(port) : std::string(buf));
  }
  freeaddrinfo(res);
}

int CheckHost(PyObject* host_obj, PyObject* port_obj, const char* event) {
  std::string host;
  if (host_obj != nullptr && PyUnicode_Check(host_obj)) {
    Utf8(host_obj, &host);
  } else if (host_obj != nullptr && PyBytes_Check(host_obj)) {
    host.assign(PyBytes_AS_STRING(host_obj), static_cast<size_t>(PyBytes_GET_SIZE(host_obj)));
  }
  long port = -1;
  if (port_obj != nullptr && PyLong_Check(port_obj)) {
    port = PyLong_AsLong(port_obj);
    PyErr_Clear();
  } else if (port_obj != nullptr && PyUnicode_Check(port_obj)) {
    port = atol(PyUnicode_AsUTF8(port_obj));
    PyErr_Clear();
  }
  std::string where = host + (port >= 0 ? ":" + std::to_string(port) : "");
  if (!t_cfg->has_policy)
    return Deny("network access to '" + where + "' is not allowed" + kNoPolicy + " [" + event + "]");
  if (!t_cfg->policy.network)
    return Deny("network access is disabled by the sandbox policy ('" + where + "', " + event + ")");
  long granted = -1;
  if (host.empty() || HostAllowed(host, port, &granted)) {
    if (!t_cfg->policy.allowAll && strcmp(event, "socket.getaddrinfo") == 0 && !host.empty())
      LearnAddresses(host, granted);
    return 0;
  }
  return Deny("network access to '" + where + "' is not in the sandbox policy's allow list [" + event + "]");
}

// socket.connect/bind/sendto: (self, address). A str/bytes address is a unix socket path.
int CheckAddress(PyObject* args, const char* event) {
  if (PyTuple_GET_SIZE(args) < 2) return 0;
  PyObject* addr = PyTuple_GET_ITEM(args, 1);
  if (PyUnicode_Check(addr) || PyBytes_Check(addr)) {
    std::string raw;
    if (PyUnicode_Check(addr)) {
      Utf8(addr, &raw);
    } else {
      raw.assign(PyBytes_AS_STRING(addr), static_cast<size_t>(PyBytes_GET_SIZE(addr)));
    }
    if (!raw.empty() && raw[0] != '\0') return CheckPath(kWrite, raw, BaseDir(args, -1), event);
    return CheckHost(nullptr, nullptr, event);
  }
  if (PyTuple_Check(addr) && PyTuple_GET_SIZE(addr) >= 2)
    return CheckHost(PyTuple_GET_ITEM(addr, 0), PyTuple_GET_ITEM(addr, 1), event);
  return CheckHost(nullptr, nullptr, event);
}

int CheckFlag(bool allowed, const char* what, const char* event) {
  if (!t_cfg->has_policy) return Deny(std::string(what) + " is not allowed" + kNoPolicy + " [" + event + "]");
  if (!allowed) return Deny(std::string(what) + " is disabled by the sandbox policy [" + event + "]");
  return 0;
}

bool StartsWith(const char* s, const char* prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

bool OneOf(const char* e, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (strcmp(e, n) == 0) return true;
  return false;
}

int HookChecked(const char* e, PyObject* args);

// What the hook trusts to build code objects, all taken right after start-up (before any
// guest code runs) and owned for the life of the process: the code object of the real
// types.coroutine, of the import system's _call_with_frames_removed, and the builtins that
// import runs through it (exec for a module body, _imp's loaders for an extension's init).
PyObject* g_types_coroutine_code = nullptr;
PyObject* g_import_call_code = nullptr;
PyObject* g_builtin_exec = nullptr;
PyObject* g_imp_exec_dynamic = nullptr;
PyObject* g_imp_create_dynamic = nullptr;

bool IsLibraryPath(const char* f) {
  if (StartsWith(f, "<frozen ")) return true;
  return Under(f, t_cfg->dist) || Under(f, t_cfg->dist_given);
}

// Code of the read-only distribution (stdlib, staged packages) or a frozen module. A guest
// cannot make its own code look like this: compile() under such a filename is refused
// (CheckCompile), and renaming a code object is itself a code.__new__.
bool IsLibraryCode(PyObject* code) {
  PyRef name(PyObject_GetAttrString(code, "co_filename"));
  const char* f = name.get() != nullptr && PyUnicode_Check(name.get()) ? PyUnicode_AsUTF8(name.get()) : nullptr;
  if (f == nullptr) {
    PyErr_Clear();
    return false;
  }
  return IsLibraryPath(f);
}

// The callable an import-system frame (_call_with_frames_removed(f, ...)) is running.
PyObject* ImportCallee(PyFrameObject* frame) {
  PyRef locals(PyFrame_GetLocals(frame));
  if (locals.get() == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  PyRef f(PyMapping_GetItemString(locals.get(), "f"));
  if (f.get() == nullptr) PyErr_Clear();
  return f.get();  // compared by identity only; the frame keeps it alive
}

// code.__new__ is raised by types.CodeType(...) and by code.replace(...): both hand-build a
// code object, which with crafted bytecode is a memory-corruption primitive inside the
// worker. Libraries do it legitimately while they are being imported: numpy renames its
// dispatchers with code.replace, and Cython-compiled extensions build their code objects
// through the same call from their init. So a call passes when, walking out from the
// innermost frame through library code only, it reaches the import system running a module
// body (exec) or an extension's init (_imp) -- or when it is types.coroutine flagging a
// generator (asyncio does it on import). Guest code on the way, a stack with no import under
// it (a thread, an event loop callback), or the import frame running anything else is refused.
int CheckCodeNew() {
  PyRef frame = PyRef::Borrow(reinterpret_cast<PyObject*>(PyEval_GetFrame()));
  bool innermost = true;
  bool allowed = false;
  while (frame) {
    auto* current = reinterpret_cast<PyFrameObject*>(frame.get());
    PyRef code(reinterpret_cast<PyObject*>(PyFrame_GetCode(current)));
    if (innermost && code.get() == g_types_coroutine_code && code) {
      allowed = true;
      break;
    }
    if (code.get() == g_import_call_code && code) {
      PyObject* callee = ImportCallee(current);
      allowed = callee != nullptr && (innermost ? (callee == g_imp_exec_dynamic || callee == g_imp_create_dynamic)
                                                : callee == g_builtin_exec);
      break;
    }
    if (!IsLibraryCode(code.get())) break;
    innermost = false;
    frame.Reset(reinterpret_cast<PyObject*>(PyFrame_GetBack(current)));  // new reference
  }
  if (allowed) return 0;
  return Deny(
      "building a code object by hand (types.CodeType(...) or code.replace(...)) is not allowed: crafted "
      "bytecode could corrupt the worker; write the function as Python source instead [code.__new__]");
}

// compile() under a filename of the distribution (or of a frozen module) would let guest code
// pass for library code in CheckCodeNew. The import system compiles a library's own source
// when it has no .pyc: that source is the file's bytes, which is what passes here.
int CheckCompile(PyObject* args) {
  if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 2) return 0;
  PyObject* name = PyTuple_GET_ITEM(args, 1);
  const char* f = name != nullptr && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
  if (f == nullptr) {
    PyErr_Clear();
    return 0;
  }
  if (!IsLibraryPath(f)) return 0;
  PyObject* source = PyTuple_GET_ITEM(args, 0);
  if (source != nullptr && PyBytes_Check(source) && !StartsWith(f, "<frozen ")) {
    std::ifstream in(f, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.good() || in.eof()) {
      if (text.size() == static_cast<size_t>(PyBytes_GET_SIZE(source)) &&
          memcmp(text.data(), PyBytes_AS_STRING(source), text.size()) == 0)
        return 0;
    }
  }
  return Deny(std::string("compiling source under the filename '") + f +
              "' of the Python distribution is not allowed: give the code a filename of its own [compile]");
}

int Hook(const char* e, PyObject* args, void*) {
  std::shared_ptr<const AuditConfig> cfg = std::atomic_load(g_config);
  if (!cfg) return 0;
  const AuditConfig* saved = t_cfg;  // hooks can nest through __fspath__
  t_cfg = cfg.get();
  int rc = HookChecked(e, args);
  t_cfg = saved;
  return rc;
}

int HookChecked(const char* e, PyObject* args) {
  // The hot, harmless events first.
  if (e[0] == 'c' && strcmp(e, "compile") == 0) return CheckCompile(args);
  if (e[0] == 'c' && strcmp(e, "code.__new__") == 0) return CheckCodeNew();
  if (strcmp(e, "exec") == 0 || strcmp(e, "object.__getattr__") == 0 || strcmp(e, "sys._getframe") == 0) return 0;
  if (strcmp(e, "sys.addaudithook") == 0) {
    // CPython treats RuntimeError here as "silently refuse the new hook".
    PyErr_SetString(PyExc_RuntimeError, "vis: audit hooks cannot be added");
    return -1;
  }
  if (!PyTuple_Check(args)) return 0;
  const Policy& p = t_cfg->policy;
  if (strcmp(e, "open") == 0) {
    bool writes = ModeWrites(args);
    if (DeviceOpen(args, writes)) return 0;
    if (!writes) return CheckArgPath(args, 0, kRead, -1, e);
    if (CheckWriteArg(args, 0, -1, e) != 0) return -1;
    return CheckGrowth(args, 0, e);
  }
  if (strcmp(e, "import") == 0) {
    // The second import event of an extension module carries its file.
    std::string file;
    if (!PathArg(args, 1, &file)) return 0;
    std::string resolved;
    bool inside = Resolve(file, &resolved) && Under(resolved, t_cfg->dist);
    if (inside) return 0;
    if (t_cfg->has_policy && p.ctypes) return CheckPath(kRead, file, BaseDir(args, -1), e);
    return Deny("loading the native extension '" + file +
                "' is not allowed: only extensions inside the Python distribution may load" +
                (t_cfg->has_policy ? std::string(" [import]") : std::string(kNoPolicy)));
  }
  if (OneOf(e, {"os.listdir", "os.scandir"})) {
    std::string raw;
    if (!PathArg(args, 0, &raw)) {
      if (PyTuple_GET_SIZE(args) == 0 || PyTuple_GET_ITEM(args, 0) == Py_None)
        return CheckPath(kRead, ".", BaseDir(args, -1), e);
      return 0;
    }
    return CheckPath(kRead, raw, BaseDir(args, -1), e);
  }
  if (OneOf(e, {"os.getxattr", "os.listxattr"})) return CheckArgPath(args, 0, kRead, -1, e);
  // unlink(2) removes a symlink itself: its target, wherever it is, is not touched.
  if (strcmp(e, "os.remove") == 0) return CheckArgPath(args, 0, kWrite, 1, e, /*follow=*/false);
  if (OneOf(e, {"os.rmdir", "shutil.rmtree"})) return CheckArgPath(args, 0, kWrite, 1, e);
  if (OneOf(e, {"os.mkdir", "os.mkfifo", "os.mknod"})) {
    if (CheckArgPath(args, 0, kWrite, 2, e) != 0) return -1;
    return CheckGrowth(args, 0, e);
  }
  if (OneOf(e, {"os.chmod", "os.lchmod"})) {
    if (SetIdMode(args, 1, e) != 0) return -1;
    return CheckWriteArg(args, 0, 2, e);
  }
  if (OneOf(e, {"os.chown", "os.lchown"})) return CheckWriteArg(args, 0, 3, e);
  if (OneOf(e, {"os.utime"})) return CheckWriteArg(args, 0, 3, e);
  if (OneOf(e, {"os.chflags", "os.lchflags", "os.truncate", "os.setxattr", "os.removexattr"}))
    return CheckWriteArg(args, 0, -1, e);
  if (OneOf(e, {"tempfile.mkstemp", "tempfile.mkdtemp"})) {
    if (CheckArgPath(args, 0, kWrite, -1, e) != 0) return -1;
    return CheckGrowth(args, 0, e);
  }
  // rename(2) moves a symlink itself and replaces a symlink at the destination: neither
  // target is touched. Both directories must be in the roots.
  if (strcmp(e, "os.rename") == 0) {
    if (CheckArgPath(args, 0, kWrite, 2, e, /*follow=*/false) != 0) return -1;
    return CheckArgPath(args, 1, kWrite, 3, e, /*follow=*/false);
  }
  if (strcmp(e, "os.link") == 0) {
    if (CheckArgPath(args, 0, kWrite, 2, e) != 0) return -1;
    if (CheckArgPath(args, 1, kWrite, 3, e) != 0) return -1;
    return CheckGrowth(args, 1, e);
  }
  if (strcmp(e, "os.symlink") == 0) {
    if (CheckArgPath(args, 1, kWrite, 2, e) != 0) return -1;
    return CheckGrowth(args, 1, e);
  }
  if (OneOf(e, {"shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree"})) {
    if (CheckArgPath(args, 0, kRead, -1, e) != 0) return -1;
    if (CheckArgPath(args, 1, kWrite, -1, e) != 0) return -1;
    return OneOf(e, {"shutil.copyfile", "shutil.copytree"}) ? CheckGrowth(args, 1, e) : 0;
  }
  // shutil.move moves a symlink as a link (rename, or a new link and an unlink): never its target.
  if (strcmp(e, "shutil.move") == 0) {
    if (CheckArgPath(args, 0, kWrite, -1, e, /*follow=*/false) != 0) return -1;
    return CheckArgPath(args, 1, kWrite, -1, e);
  }
  if (StartsWith(e, "socket.")) {
    if (strcmp(e, "socket.__new__") == 0) {
      // AF_UNIX without bind/connect is a private pipe (asyncio's self-pipe needs one).
      if (PyTuple_GET_SIZE(args) >= 2 && PyLong_Check(PyTuple_GET_ITEM(args, 1)) &&
          PyLong_AsLong(PyTuple_GET_ITEM(args, 1)) == AF_UNIX)
        return 0;
      PyErr_Clear();
      return CheckHost(nullptr, nullptr, e);
    }
    if (OneOf(e, {"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"})) return CheckAddress(args, e);
    if (OneOf(e, {"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr"}))
      return CheckHost(PyTuple_GET_SIZE(args) > 0 ? PyTuple_GET_ITEM(args, 0) : nullptr,
                       PyTuple_GET_SIZE(args) > 1 ? PyTuple_GET_ITEM(args, 1) : nullptr, e);
    return CheckHost(nullptr, nullptr, e);
  }
  if (OneOf(e, {"http.client.connect", "ftplib.connect", "smtplib.connect", "poplib.connect", "nntplib.connect",
                "imaplib.open", "telnetlib.Telnet.open"}))
    return CheckHost(PyTuple_GET_SIZE(args) > 1 ? PyTuple_GET_ITEM(args, 1) : nullptr,
                     PyTuple_GET_SIZE(args) > 2 ? PyTuple_GET_ITEM(args, 2) : nullptr, e);
  if (OneOf(e, {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
                "pty.spawn", "os.startfile", "os.kill", "os.killpg", "webbrowser.open"}))
    return CheckFlag(t_cfg->has_policy && p.processes, "starting or signalling processes", e);
  if (strcmp(e, "ctypes.dlopen") == 0 && t_cfg->has_policy && !p.ctypes && PyTuple_GET_SIZE(args) > 0) {
    // `import ctypes` opens the process itself (ctypes.pythonapi), and packages in the
    // distribution (numpy.ctypeslib) import ctypes: loading what is already loaded, or a
    // library of the read-only distribution, is allowed. Calling anything through ctypes
    // (ctypes.call_function), raw memory (ctypes.cdata...) and any other library stay
    // refused below.
    if (PyTuple_GET_ITEM(args, 0) == Py_None) return 0;
    std::string file, resolved;
    if (PathArg(args, 0, &file) && file.find('/') != std::string::npos && Resolve(file, &resolved) &&
        Under(resolved, t_cfg->dist))
      return 0;
    PyErr_Clear();
  }
  if (StartsWith(e, "ctypes.")) return CheckFlag(t_cfg->has_policy && p.ctypes, "ctypes", e);
  return 0;
}

}  // namespace

void AuditInstall(const std::vector<std::string>& readRoots, const std::string& distRoot) {
  auto cfg = std::make_shared<AuditConfig>();
  for (const auto& r : readRoots) {
    std::string resolved;
    cfg->base_reads.push_back(Resolve(r, &resolved) ? resolved : r);
  }
  std::string d;
  cfg->dist = Resolve(distRoot, &d) ? d : distRoot;
  cfg->dist_given = distRoot;
  cfg->base_reads.push_back(cfg->dist);
  std::atomic_store(g_config, std::shared_ptr<const AuditConfig>(cfg));
  PySys_AddAuditHook(Hook, nullptr);
}

void AuditAfterInit() {
  if (g_types_coroutine_code != nullptr) return;
  PyRef types(PyImport_ImportModule("types"));
  PyRef fn(types.get() != nullptr ? PyObject_GetAttrString(types.get(), "coroutine") : nullptr);
  g_types_coroutine_code = fn.get() != nullptr ? PyObject_GetAttrString(fn.get(), "__code__") : nullptr;
  PyRef bootstrap(PyImport_ImportModule("_frozen_importlib"));
  PyRef call(bootstrap.get() != nullptr ? PyObject_GetAttrString(bootstrap.get(), "_call_with_frames_removed")
                                        : nullptr);
  g_import_call_code = call.get() != nullptr ? PyObject_GetAttrString(call.get(), "__code__") : nullptr;
  PyRef builtins(PyImport_ImportModule("builtins"));
  g_builtin_exec = builtins.get() != nullptr ? PyObject_GetAttrString(builtins.get(), "exec") : nullptr;
  PyRef imp(PyImport_ImportModule("_imp"));
  g_imp_exec_dynamic = imp.get() != nullptr ? PyObject_GetAttrString(imp.get(), "exec_dynamic") : nullptr;
  g_imp_create_dynamic = imp.get() != nullptr ? PyObject_GetAttrString(imp.get(), "create_dynamic") : nullptr;
  // Whatever is missing stays null and trusts nothing (fail closed).
  PyErr_Clear();
}

void AuditSetWriteRefusal(const std::string& why) {
  std::atomic_store(g_write_refusal, std::make_shared<const std::string>(why));
}

void AuditSetPolicy(const Policy& p) {
  std::shared_ptr<const AuditConfig> old = std::atomic_load(g_config);
  auto cfg = std::make_shared<AuditConfig>(old ? *old : AuditConfig{});
  cfg->policy = p;
  cfg->has_policy = true;
  {
    std::lock_guard<std::mutex> lk(*g_ips_mu);
    g_ips->clear();
  }
  std::atomic_store(g_config, std::shared_ptr<const AuditConfig>(cfg));
}

}  // namespace vis
