/*
 * vis-launcher: the last single-threaded step before the worker's node.
 *
 * Landlock on this kernel binds only the calling thread and the threads it
 * creates later, and node starts V8/libuv threads before any JS runs. So the
 * restriction has to happen here, in a process with one thread, and then be
 * inherited across execve. Order: rlimits, no_new_privs, Landlock, execve.
 *
 * bubblewrap cannot mount binds noexec, so it hands us CAP_SYS_ADMIN (inside the
 * sandbox's user namespace only) and we remount the roots noexec here, then drop
 * every capability before anything else runs.
 *
 * Usage:
 *   vis-launcher [--noexec PATH]... [--ro PATH]... [--rd PATH]... [--rw PATH]... [--dev PATH]...
 *                [--connect-tcp PORT]... [--bind-tcp PORT]... [--tcp-from PORT]
 *                [--nofile N] [--nproc N] [--fsize BYTES]
 *                [--min-abi N] [--no-landlock] [--keep-fds N] -- PROGRAM [ARGS...]
 *
 * --noexec  remount PATH noexec,nosuid,nodev (needs CAP_SYS_ADMIN in the namespace)
 * --ro   read + execute (distribution, package files, libraries)
 * --rd   read only, never execute (the roots of a read-only session: its files stay data)
 * --rw   read + write, never execute (the session's roots)
 * --dev  read + write on a device file (/dev/null)
 * --tcp-from PORT  allow TCP bind and connect on every port from PORT to 65535 (a tool
 *                  jail sharing its session's loopback-only network namespace; Landlock
 *                  rules name ports, not addresses). Without ABI 4 TCP is not restricted
 *                  by Landlock at all, which is what the option asks for.
 * --keep-fds N  close every fd >= N before exec: whatever the host inherited
 *               without O_CLOEXEC must not reach the guest (default 3)
 * Exit status 125 with "vis-launcher: ..." on stderr when a step fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Own definitions: distribution headers lag the kernel's Landlock ABI. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_REMOVE_DIR (1ULL << 4)
#define FS_REMOVE_FILE (1ULL << 5)
#define FS_MAKE_CHAR (1ULL << 6)
#define FS_MAKE_DIR (1ULL << 7)
#define FS_MAKE_REG (1ULL << 8)
#define FS_MAKE_SOCK (1ULL << 9)
#define FS_MAKE_FIFO (1ULL << 10)
#define FS_MAKE_BLOCK (1ULL << 11)
#define FS_MAKE_SYM (1ULL << 12)
#define FS_REFER (1ULL << 13)     /* ABI 2 */
#define FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */

#define NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */

#define SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define SCOPE_SIGNAL (1ULL << 1)        /* ABI 6 */

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

struct ll_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
};

#define MAX_RULES 256

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("vis-launcher: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  _exit(125);
}

static unsigned long long parse_num(const char *flag, const char *s) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') die("%s expects a number, got '%s'", flag, s);
  return v;
}

static void set_limit(int resource, const char *name, rlim_t value) {
  struct rlimit rl = {value, value};
  if (setrlimit(resource, &rl) != 0) die("setrlimit(%s, %llu): %s", name, (unsigned long long)value, strerror(errno));
}

static uint64_t fs_rights_for_abi(int abi) {
  uint64_t all = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR | FS_REMOVE_FILE |
                 FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM;
  if (abi >= 2) all |= FS_REFER;
  if (abi >= 3) all |= FS_TRUNCATE;
  if (abi >= 5) all |= FS_IOCTL_DEV;
  return all;
}

/* Rights that make sense on a non-directory: the kernel rejects the rest. */
static const uint64_t FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;

static void add_path_rule(int ruleset, const char *path, uint64_t wanted, uint64_t handled, int required) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (!required && errno == ENOENT) return; /* optional extras such as /etc/ssl/openssl.cnf */
    die("cannot open %s for a Landlock rule: %s", path, strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) die("fstat %s: %s", path, strerror(errno));
  uint64_t allowed = wanted & handled;
  if (!S_ISDIR(st.st_mode)) allowed &= FILE_RIGHTS;
  struct ll_path_beneath_attr attr = {.allowed_access = allowed, .parent_fd = fd};
  if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &attr, 0) != 0)
    die("landlock_add_rule(%s): %s", path, strerror(errno));
  close(fd);
}

/* Keep the flags the mount already has: the kernel refuses to change locked ones (atime, ro). */
static void remount_noexec(const char *path) {
  struct statvfs sv;
  if (statvfs(path, &sv) != 0) die("statvfs %s: %s", path, strerror(errno));
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOEXEC | MS_NOSUID | MS_NODEV;
  if (sv.f_flag & ST_RDONLY) flags |= MS_RDONLY;
  if (sv.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  if (mount(NULL, path, NULL, flags, NULL) != 0) die("remount %s noexec: %s", path, strerror(errno));
}

static void drop_capabilities(void) {
  for (int cap = 0; cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      die("PR_CAPBSET_DROP %d: %s", cap, strerror(errno));
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) die("clearing ambient caps: %s", strerror(errno));
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &hdr, data) != 0) die("capset: %s", strerror(errno));
}

int main(int argc, char **argv) {
  const char *noexec[MAX_RULES];
  int n_noexec = 0;
  const char *ro[MAX_RULES], *rd[MAX_RULES], *rw[MAX_RULES], *dev[MAX_RULES];
  unsigned long long connect_ports[MAX_RULES], bind_ports[MAX_RULES];
  int n_ro = 0, n_rd = 0, n_rw = 0, n_dev = 0, n_connect = 0, n_bind = 0;
  long long nofile = -1, nproc = -1, fsize = -1, tcp_from = -1;
  int min_abi = 1, no_landlock = 0;
  unsigned keep_fds = 3;
  int i = 1;

  for (; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (strcmp(a, "--no-landlock") == 0) {
      no_landlock = 1;
      continue;
    }
    if (i + 1 >= argc) die("%s needs a value", a);
    const char *v = argv[++i];
    int full = n_noexec >= MAX_RULES || n_ro >= MAX_RULES || n_rd >= MAX_RULES || n_rw >= MAX_RULES ||
               n_dev >= MAX_RULES || n_connect >= MAX_RULES || n_bind >= MAX_RULES;
    if (full) die("too many rules");
    if (strcmp(a, "--noexec") == 0) noexec[n_noexec++] = v;
    else if (strcmp(a, "--ro") == 0) ro[n_ro++] = v;
    else if (strcmp(a, "--rd") == 0) rd[n_rd++] = v;
    else if (strcmp(a, "--rw") == 0) rw[n_rw++] = v;
    else if (strcmp(a, "--dev") == 0) dev[n_dev++] = v;
    else if (strcmp(a, "--connect-tcp") == 0) connect_ports[n_connect++] = parse_num(a, v);
    else if (strcmp(a, "--bind-tcp") == 0) bind_ports[n_bind++] = parse_num(a, v);
    else if (strcmp(a, "--tcp-from") == 0) {
      tcp_from = (long long)parse_num(a, v);
      if (tcp_from < 1 || tcp_from > 65535) die("--tcp-from expects a port, got '%s'", v);
    } else if (strcmp(a, "--nofile") == 0) nofile = (long long)parse_num(a, v);
    else if (strcmp(a, "--nproc") == 0) nproc = (long long)parse_num(a, v);
    else if (strcmp(a, "--fsize") == 0) fsize = (long long)parse_num(a, v);
    else if (strcmp(a, "--min-abi") == 0) min_abi = (int)parse_num(a, v);
    else if (strcmp(a, "--keep-fds") == 0) keep_fds = (unsigned)parse_num(a, v);
    else die("unknown option %s", a);
  }
  if (i >= argc) die("no program given after --");

  for (int k = 0; k < n_noexec; k++) remount_noexec(noexec[k]);
  drop_capabilities();

  /* Hard limits: soft == hard, and without CAP_SYS_RESOURCE they cannot be raised again.
     RLIMIT_AS is deliberately absent: V8 reserves large address ranges up front. */
  set_limit(RLIMIT_CORE, "CORE", 0);
  if (nofile >= 0) set_limit(RLIMIT_NOFILE, "NOFILE", (rlim_t)nofile);
  if (nproc >= 0) set_limit(RLIMIT_NPROC, "NPROC", (rlim_t)nproc);
  if (fsize >= 0) set_limit(RLIMIT_FSIZE, "FSIZE", (rlim_t)fsize);

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
  /* Nobody may attach to or read the memory of the worker, even the same uid. */
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) die("PR_SET_DUMPABLE: %s", strerror(errno));

  if (!no_landlock) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    if (abi < 0) die("Landlock is unavailable (%s)", strerror(errno));
    if (abi < min_abi) die("Landlock ABI %ld is older than the required %d", abi, min_abi);

    struct ll_ruleset_attr attr = {0};
    attr.handled_access_fs = fs_rights_for_abi((int)abi);
    if (abi >= 4) attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
    if (abi >= 6) attr.scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL;
    size_t attr_size = abi >= 6 ? sizeof(attr) : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
    if (rs < 0) die("landlock_create_ruleset: %s", strerror(errno));

    uint64_t handled = attr.handled_access_fs;
    uint64_t read_exec = FS_READ_FILE | FS_READ_DIR | FS_EXECUTE;
    uint64_t read_write = handled & ~(FS_EXECUTE | FS_MAKE_CHAR | FS_MAKE_BLOCK);
    for (int k = 0; k < n_ro; k++) add_path_rule(rs, ro[k], read_exec, handled, 0);
    for (int k = 0; k < n_rd; k++) add_path_rule(rs, rd[k], FS_READ_FILE | FS_READ_DIR, handled, 1);
    for (int k = 0; k < n_rw; k++) add_path_rule(rs, rw[k], read_write, handled, 1);
    for (int k = 0; k < n_dev; k++) add_path_rule(rs, dev[k], FS_READ_FILE | FS_WRITE_FILE | FS_IOCTL_DEV, handled, 0);

    if (abi >= 4) {
      for (int k = 0; k < n_connect; k++) {
        struct ll_net_port_attr np = {.allowed_access = NET_CONNECT_TCP, .port = connect_ports[k]};
        if (syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &np, 0) != 0)
          die("landlock connect rule %llu: %s", connect_ports[k], strerror(errno));
      }
      for (int k = 0; k < n_bind; k++) {
        struct ll_net_port_attr np = {.allowed_access = NET_BIND_TCP, .port = bind_ports[k]};
        if (syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &np, 0) != 0)
          die("landlock bind rule %llu: %s", bind_ports[k], strerror(errno));
      }
      for (long long p = tcp_from; tcp_from > 0 && p <= 65535; p++) {
        struct ll_net_port_attr np = {.allowed_access = NET_BIND_TCP | NET_CONNECT_TCP, .port = (uint64_t)p};
        if (syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &np, 0) != 0)
          die("landlock tcp rule %lld: %s", p, strerror(errno));
      }
    } else if (n_connect > 0 || n_bind > 0) {
      die("TCP port rules need Landlock ABI 4, the kernel has %ld", abi);
    }

    if (syscall(SYS_landlock_restrict_self, rs, 0) != 0) die("landlock_restrict_self: %s", strerror(errno));
    close(rs);
  }

  if (syscall(SYS_close_range, keep_fds, ~0U, 0) != 0) die("close_range(%u): %s", keep_fds, strerror(errno));

  execv(argv[i], &argv[i]);
  die("execv %s: %s", argv[i], strerror(errno));
  return 125;
}
