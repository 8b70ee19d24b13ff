/*
 * The seccomp filter's per-architecture pieces, chosen by the compiler's target: the audit
 * architecture the filter admits (any other entry point, such as i386 on x86_64 or AArch32 on
 * arm64, kills the process) and the syscalls that exist there. Syscall numbers come from the
 * target's own <sys/syscall.h>, so the same source compiles to each architecture's numbers.
 * A new architecture is a new case here (and a row in src/distribution/platform.ts).
 */
#pragma once
#include <linux/audit.h>

#if defined(__x86_64__)
#define VIS_AUDIT_ARCH AUDIT_ARCH_X86_64
/* x32 calls share the x86_64 audit arch and set this bit in the number. */
#define VIS_X32_BIT 1
/* fork and vfork are syscalls of their own here (aarch64 has clone only). */
#define VIS_LEGACY_FORK 1
/* chmod, creat, mknod and open exist beside their *at forms (aarch64 has the *at forms only). */
#define VIS_LEGACY_FS_CALLS 1
#elif defined(__aarch64__)
#define VIS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#define VIS_X32_BIT 0
#define VIS_LEGACY_FORK 0
#define VIS_LEGACY_FS_CALLS 0
#else
#error "seccomp_arch.h: no seccomp filter for this architecture yet (add a case)"
#endif
