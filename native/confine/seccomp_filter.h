// The worker's seccomp filter: built as classic BPF, installed on every thread.
#pragma once
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  bool processes; /* fork/vfork/execve/clone without CLONE_THREAD */
  bool network;   /* AF_INET/AF_INET6 sockets */
} vis_seccomp_options;

struct sock_filter;

/* Writes the filter for opts into out (at most cap instructions) without installing it, and
   returns the instruction count or -E2BIG. For tests that run the program in an interpreter. */
int vis_seccomp_program(const vis_seccomp_options *opts, struct sock_filter *out, unsigned cap);

/* The AUDIT_ARCH_* value the filter admits (this build's architecture). */
unsigned vis_seccomp_audit_arch(void);

/* Returns 0, or -errno; on a TSYNC failure *failed_tid names the thread that could not be synced. */
int vis_seccomp_install(const vis_seccomp_options *opts, long *failed_tid);

/* 1 when the kernel offers seccomp filters with SECCOMP_RET_ERRNO, else 0. */
int vis_seccomp_available(void);

/* Landlock ABI version, or -errno when the kernel has none. */
long vis_landlock_abi(void);

#ifdef __cplusplus
}
#endif
