/*
 * Classic-BPF seccomp filter for the worker. Written out by hand (no libseccomp)
 * so the addon has no runtime dependency beyond libc.
 *
 * Answers: clone3 -> ENOSYS (glibc then falls back to clone, which we can
 * inspect; EPERM would break pthread_create). Everything denied -> EPERM, except
 * socket families -> EAFNOSUPPORT so callers see the usual "not supported" error,
 * and fallocate -> EOPNOTSUPP (glibc's posix_fallocate then writes the blocks), and openat2 -> ENOSYS
 * (its mode sits in a struct the filter cannot read; libc falls back to openat, which it can).
 */
#define _GNU_SOURCE
#include "seccomp_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp_arch.h"

#define MAX_INSNS 256
#define X32_SYSCALL_BIT 0x40000000u
#define NS_CLONE_FLAGS                                                                                         \
  (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
   0x00000080u /* CLONE_NEWTIME */)
#define TCP_LEVEL 6
#define TCP_FASTOPEN_CONNECT_OPT 30
/* FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE (linux/falloc.h) */
#define FALLOC_PUNCH_HOLE_KEEP_SIZE 0x03u
/* S_ISUID | S_ISGID */
#define SET_ID_BITS 06000u
/* O_TMPFILE without the O_DIRECTORY it carries: the bit that makes open(2) create a file. */
#define CREATE_FLAGS ((unsigned)O_CREAT | ((unsigned)O_TMPFILE & ~(unsigned)O_DIRECTORY))
/* Linux 6.6; one number on every architecture, older headers lack it. */
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

typedef struct {
  struct sock_filter insns[MAX_INSNS];
  unsigned n;
  int overflow;
} prog_t;

static void emit(prog_t *p, struct sock_filter f) {
  if (p->n >= MAX_INSNS) {
    p->overflow = 1;
    return;
  }
  p->insns[p->n++] = f;
}

#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG_LO(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define DENY(e) RET(SECCOMP_RET_ERRNO | (SECCOMP_RET_DATA & (e)))
#define ALLOW RET(SECCOMP_RET_ALLOW)

/* Opens "if (nr == which) { ... }": the false branch is patched to skip the body once it is emitted,
   so the accumulator still holds nr for the next check. */
static unsigned open_block(prog_t *p, unsigned which) {
  unsigned at = p->n;
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, which, 0, 0));
  return at;
}

static void close_block(prog_t *p, unsigned at) {
  if (!p->overflow) p->insns[at].jf = (unsigned char)(p->n - at - 1);
}

/* if (nr == which) return errno; */
static void deny_nr(prog_t *p, unsigned which, int err) {
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, which, 0, 1));
  emit(p, (struct sock_filter)DENY(err));
}

/* socket()/socketpair(): family in args[0], type in args[1]. */
static void socket_rule(prog_t *p, unsigned nr, int network) {
  /* skip over the 8..10 instruction block when this is not our syscall */
  unsigned at = open_block(p, nr);
  emit(p, (struct sock_filter)LD_ARG_LO(0));
  if (network) {
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 3, 0));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 2, 0));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 1, 0));
  } else {
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 1, 0));
  }
  emit(p, (struct sock_filter)DENY(EAFNOSUPPORT));
  emit(p, (struct sock_filter)LD_ARG_LO(1));
  emit(p, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf)); /* SOCK_TYPE_MASK */
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_RAW, 1, 0));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_PACKET, 0, 1));
  emit(p, (struct sock_filter)DENY(EPERM));
  emit(p, (struct sock_filter)ALLOW);
  close_block(p, at);
}

/* The body of a rule that refuses its call only for some bits of one argument:
   "if (args[arg] & bits) return EPERM; return ALLOW;" (four instructions). */
static void deny_if_bits(prog_t *p, int arg, unsigned bits) {
  emit(p, (struct sock_filter)LD_ARG_LO(arg));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, bits, 0, 1));
  emit(p, (struct sock_filter)DENY(EPERM));
  emit(p, (struct sock_filter)ALLOW);
}

/* sendto/sendmsg/sendmmsg: refuse MSG_FASTOPEN, which sends a SYN without connect()'s Landlock check. */
static void fastopen_rule(prog_t *p, unsigned nr, int flags_arg) {
  unsigned at = open_block(p, nr);
  deny_if_bits(p, flags_arg, MSG_FASTOPEN);
  close_block(p, at);
}

/* A call that gives a file a mode: chmod-like calls and creations whose mode always applies (creat,
   mknod), or open/openat, whose mode only counts when the flags create a file (O_CREAT, O_TMPFILE). */
typedef struct {
  unsigned nr;
  int mode_arg;
  int create_flags_arg; /* MODE_ALWAYS_APPLIES, or the argument holding open's flags */
} set_id_call;

#define MODE_ALWAYS_APPLIES (-1)

/* Ordered as the rules are emitted (the legacy calls first). */
// clang-format off
static const set_id_call set_id_calls[] = {
#if VIS_LEGACY_FS_CALLS
    {SYS_chmod,     1, MODE_ALWAYS_APPLIES},
    {SYS_creat,     1, MODE_ALWAYS_APPLIES},
    {SYS_mknod,     1, MODE_ALWAYS_APPLIES},
    {SYS_open,      2, 1},
#endif
    {SYS_fchmod,    1, MODE_ALWAYS_APPLIES},
    {SYS_fchmodat,  2, MODE_ALWAYS_APPLIES},
    {SYS_fchmodat2, 2, MODE_ALWAYS_APPLIES},
    {SYS_mknodat,   2, MODE_ALWAYS_APPLIES},
    {SYS_openat,    3, 2},
};
// clang-format on

/* No set-id bits on any file the sandbox makes or changes: each call above is refused when its mode
   carries S_ISUID or S_ISGID. The roots are mounted nosuid only inside the jail; on the host such a
   file is a set-id program of the host user (root, when the host runs as root). umode_t is 16 bits,
   so the low word of the argument is what the kernel reads. mkdir/mkdirat need no rule: the kernel
   drops S_ISUID and S_ISGID from their mode (a directory still inherits S_ISGID from a set-gid
   parent, which only passes a group on). chmod cannot tell a directory from a file, so a set-gid
   directory by chmod is refused with the rest. File capabilities (security.capability) need
   CAP_SETFCAP, which the jail never has. */
static void set_id_rules(prog_t *p) {
  for (size_t k = 0; k < sizeof set_id_calls / sizeof set_id_calls[0]; k++) {
    const set_id_call *c = &set_id_calls[k];
    unsigned at = open_block(p, c->nr);
    if (c->create_flags_arg != MODE_ALWAYS_APPLIES) {
      emit(p, (struct sock_filter)LD_ARG_LO(c->create_flags_arg));
      /* Not creating: over deny_if_bits's load, test and deny, to its ALLOW. */
      emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CREATE_FLAGS, 0, 3));
    }
    deny_if_bits(p, c->mode_arg, SET_ID_BITS);
    close_block(p, at);
  }
  deny_nr(p, SYS_openat2, ENOSYS);
}

static void build(prog_t *p, const vis_seccomp_options *o) {
  p->n = 0;
  p->overflow = 0;
  /* Only this architecture's native calls: another entry point (i386 on x86_64, AArch32 on
     arm64) numbers its syscalls differently and would bypass the numbers below. */
  emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, VIS_AUDIT_ARCH, 1, 0));
  emit(p, (struct sock_filter)RET(SECCOMP_RET_KILL_PROCESS));
  emit(p, (struct sock_filter)LD_NR);
#if VIS_X32_BIT
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1));
  emit(p, (struct sock_filter)DENY(EPERM));
#endif

  deny_nr(p, SYS_clone3, ENOSYS);
  // A table, four syscalls a row: kept as written.
  // clang-format off
  static const unsigned never[] = {
      SYS_ptrace,        SYS_process_vm_readv, SYS_process_vm_writev, SYS_io_uring_setup,
      SYS_io_uring_enter, SYS_io_uring_register, SYS_bpf,             SYS_perf_event_open,
      SYS_userfaultfd,   SYS_keyctl,           SYS_add_key,           SYS_request_key,
      SYS_unshare,       SYS_setns,            SYS_mount,             SYS_umount2,
      SYS_pivot_root,    SYS_chroot,           SYS_open_tree,         SYS_move_mount,
      SYS_fsopen,        SYS_fsconfig,         SYS_fsmount,           SYS_fspick,
      SYS_mount_setattr, SYS_kexec_load,       SYS_kexec_file_load,   SYS_init_module,
      SYS_finit_module,  SYS_delete_module,    SYS_swapon,            SYS_swapoff,
      SYS_reboot,        SYS_acct,             SYS_open_by_handle_at, SYS_name_to_handle_at,
      SYS_process_madvise, SYS_pidfd_getfd,    SYS_kcmp,
  };
  // clang-format on
  for (size_t k = 0; k < sizeof never / sizeof never[0]; k++) deny_nr(p, never[k], EPERM);
  if (!o->processes) {
#if VIS_LEGACY_FORK
    deny_nr(p, SYS_fork, EPERM);
    deny_nr(p, SYS_vfork, EPERM);
#endif
    deny_nr(p, SYS_execve, EPERM);
    deny_nr(p, SYS_execveat, EPERM);
  }

  /* clone: never new namespaces; a new process only when processes are allowed. */
  unsigned clone_at = open_block(p, SYS_clone);
  emit(p, (struct sock_filter)LD_ARG_LO(0));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NS_CLONE_FLAGS, 0, 1));
  emit(p, (struct sock_filter)DENY(EPERM));
  if (!o->processes) {
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0));
    emit(p, (struct sock_filter)DENY(EPERM));
  }
  emit(p, (struct sock_filter)ALLOW);
  close_block(p, clone_at);

  set_id_rules(p);
  socket_rule(p, SYS_socket, o->network);
  socket_rule(p, SYS_socketpair, o->network);
  fastopen_rule(p, SYS_sendto, 3);
  fastopen_rule(p, SYS_sendmsg, 2);
  fastopen_rule(p, SYS_sendmmsg, 3);

  /* fallocate: reserving blocks costs no write, so a block could take gigabytes in the time between two
     disk-budget checks. EOPNOTSUPP makes glibc's posix_fallocate write the blocks instead (bounded like any
     write); punching a hole (which only frees blocks) stays allowed. */
  unsigned fa_at = open_block(p, SYS_fallocate);
  emit(p, (struct sock_filter)LD_ARG_LO(1));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FALLOC_PUNCH_HOLE_KEEP_SIZE, 1, 0));
  emit(p, (struct sock_filter)DENY(EOPNOTSUPP));
  emit(p, (struct sock_filter)ALLOW);
  close_block(p, fa_at);

  /* setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, ...) */
  unsigned sso_at = open_block(p, SYS_setsockopt);
  emit(p, (struct sock_filter)LD_ARG_LO(1));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TCP_LEVEL, 0, 3));
  emit(p, (struct sock_filter)LD_ARG_LO(2));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TCP_FASTOPEN_CONNECT_OPT, 0, 1));
  emit(p, (struct sock_filter)DENY(EPERM));
  emit(p, (struct sock_filter)ALLOW);
  close_block(p, sso_at);
  emit(p, (struct sock_filter)ALLOW);
}

int vis_seccomp_program(const vis_seccomp_options *opts, struct sock_filter *out, unsigned cap) {
  prog_t p;
  build(&p, opts);
  if (p.overflow || p.n > cap) return -E2BIG;
  memcpy(out, p.insns, p.n * sizeof p.insns[0]);
  return (int)p.n;
}

unsigned vis_seccomp_audit_arch(void) { return VIS_AUDIT_ARCH; }

int vis_seccomp_install(const vis_seccomp_options *opts, long *failed_tid) {
  prog_t p;
  build(&p, opts);
  if (p.overflow) return -E2BIG;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
  struct sock_fprog prog = {.len = (unsigned short)p.n, .filter = p.insns};
  long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
  if (rc < 0) return -errno;
  if (rc > 0) {
    /* TSYNC names the thread that could not be synchronised; nothing was installed. */
    if (failed_tid) *failed_tid = rc;
    return -ESRCH;
  }
  return 0;
}

int vis_seccomp_available(void) {
  unsigned action = SECCOMP_RET_ERRNO;
  if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) return 0;
  return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

long vis_landlock_abi(void) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1U /* LANDLOCK_CREATE_RULESET_VERSION */);
  return abi < 0 ? -errno : abi;
}
