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

/* Returns 0, or -errno; on a TSYNC failure *failed_tid names the thread that could not be synced. */
int vis_seccomp_install(const vis_seccomp_options *opts, long *failed_tid);

/* 1 when the kernel offers seccomp filters with SECCOMP_RET_ERRNO, else 0. */
int vis_seccomp_available(void);

/* Landlock ABI version, or -errno when the kernel has none. */
long vis_landlock_abi(void);

#ifdef __cplusplus
}
#endif
