// issue 37 §1: the worker's seccomp filter per architecture. The filter's own source is compiled
// for x86_64 (gcc) and for aarch64 (the cross toolchain), each build prints the program it would
// install (test/native/fixtures/seccomp-dump.c; the aarch64 one runs under qemu-aarch64-static),
// and a classic-BPF interpreter below runs that program against each architecture's syscall
// numbers: the kernel's tables, written out here independently of the headers the filter uses.
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { needs } from '../helpers/needs.js'

const repo = join(import.meta.dirname, '..', '..')
const FIXTURE = join(repo, 'test', 'native', 'fixtures', 'seccomp-dump.c')
const FILTER = join(repo, 'native', 'confine', 'seccomp_filter.c')
const tmp = mkdtempSync(join(tmpdir(), 'vis-seccomp-arch-'))
after(() => rmSync(tmp, { recursive: true, force: true }))

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0
const crossReady = has('aarch64-linux-gnu-gcc') && has('qemu-aarch64-static')
const crossSkip = needs(
  crossReady,
  'the aarch64 cross compiler and qemu-user-static',
  'apt-get install gcc-aarch64-linux-gnu qemu-user-static',
)

// linux/audit.h
const AUDIT_ARCH_X86_64 = 0xc000003e
const AUDIT_ARCH_I386 = 0x40000003
const AUDIT_ARCH_AARCH64 = 0xc00000b7
const AUDIT_ARCH_ARM = 0x40000028

// The kernel's syscall tables (arch/x86/entry/syscalls/syscall_64.tbl; include/uapi/asm-generic/unistd.h).
const NR = {
  x86_64: {
    read: 0,
    write: 1,
    openat: 257,
    mmap: 9,
    nanosleep: 35,
    setresuid: 117,
    socket: 41,
    socketpair: 53,
    sendto: 44,
    sendmsg: 46,
    setsockopt: 54,
    clone: 56,
    fork: 57,
    vfork: 58,
    execve: 59,
    ptrace: 101,
    mount: 165,
    pivot_root: 155,
    unshare: 272,
    keyctl: 250,
    fallocate: 285,
    sendmmsg: 307,
    process_vm_readv: 310,
    bpf: 321,
    execveat: 322,
    io_uring_setup: 425,
    clone3: 435,
    open: 2,
    creat: 85,
    chmod: 90,
    fchmod: 91,
    mknod: 133,
    mknodat: 259,
    fchmodat: 268,
    mkdirat: 258,
    openat2: 437,
    fchmodat2: 452,
  },
  aarch64: {
    read: 63,
    write: 64,
    openat: 56,
    mmap: 222,
    nanosleep: 101,
    setresuid: 147,
    socket: 198,
    socketpair: 199,
    sendto: 206,
    sendmsg: 211,
    setsockopt: 208,
    clone: 220,
    execve: 221,
    ptrace: 117,
    mount: 40,
    pivot_root: 41,
    unshare: 97,
    keyctl: 219,
    fallocate: 47,
    sendmmsg: 269,
    process_vm_readv: 270,
    bpf: 280,
    execveat: 281,
    io_uring_setup: 425,
    clone3: 435,
    fchmod: 52,
    mknodat: 33,
    fchmodat: 53,
    mkdirat: 34,
    openat2: 437,
    fchmodat2: 452,
  },
} as const
type Arch = keyof typeof NR

const EPERM = 1
const ENOSYS = 38
const EOPNOTSUPP = 95
const EAFNOSUPPORT = 97
const AF_UNIX = 1
const AF_INET = 2
const SOCK_STREAM = 1
const SOCK_RAW = 3
const MSG_FASTOPEN = 0x20000000
const CLONE_THREAD_FLAGS = 0x3d0f00 // what glibc's pthread_create passes
const SIGCHLD = 17
const CLONE_NEWUSER = 0x10000000
// Set-id bits and the open flags that create a file (asm-generic/fcntl.h: the same on both).
const S_ISUID = 0o4000
const S_ISGID = 0o2000
const S_IFREG = 0o100000
const O_WRONLY = 0o1
const O_CREAT = 0o100
const O_TMPFILE = 0o20000000 | 0o200000 // with x86_64's O_DIRECTORY; the kernel's __O_TMPFILE bit is what counts
const AT_FDCWD = 0xffffff9c // -100 as the low word the filter reads

type Insn = { code: number; jt: number; jf: number; k: number }
type Program = { arch: number; insns: Insn[] }

function compile(arch: Arch): string {
  const out = join(tmp, `dump-${arch}`)
  const cc = arch === 'x86_64' ? 'gcc' : 'aarch64-linux-gnu-gcc'
  // Static: the aarch64 build then runs under qemu without an arm64 libc on the host.
  execFileSync(cc, ['-O1', '-static', '-o', out, FIXTURE, FILTER], { stdio: 'pipe' })
  const machine = readFileSync(out).readUInt16LE(18) // e_machine
  assert.equal(machine, arch === 'x86_64' ? 62 : 183, `${out} is not an ${arch} executable`)
  return out
}

function dump(arch: Arch, processes: boolean, network: boolean): Program {
  const exe = compile(arch)
  const args = [processes ? '1' : '0', network ? '1' : '0']
  const text =
    arch === 'x86_64'
      ? execFileSync(exe, args, { encoding: 'utf8' })
      : execFileSync('qemu-aarch64-static', [exe, ...args], { encoding: 'utf8' })
  const [head, ...lines] = text.trim().split('\n')
  const archValue = Number(/^arch (\d+)$/.exec(head ?? '')?.[1])
  const insns = lines.map((l) => {
    const [code, jt, jf, k] = l.split(' ').map(Number)
    return { code: code!, jt: jt!, jf: jf!, k: k! }
  })
  return { arch: archValue, insns }
}

// struct seccomp_data: nr (u32), arch (u32), instruction_pointer (u64), args[6] (u64); little-endian
// on both architectures, as the kernel hands it to the filter.
function seccompData(arch: number, nr: number, args: number[] = []): Buffer {
  const b = Buffer.alloc(64)
  b.writeUInt32LE(nr >>> 0, 0)
  b.writeUInt32LE(arch >>> 0, 4)
  for (const [i, a] of args.entries()) b.writeBigUInt64LE(BigInt(a), 16 + 8 * i)
  return b
}

// A classic-BPF interpreter for what seccomp accepts (linux/filter.h opcodes). Unknown opcodes
// throw, so a program the interpreter cannot judge never passes by accident.
function runBpf(insns: Insn[], data: Buffer): number {
  let a = 0
  let x = 0
  const mem = new Uint32Array(16)
  for (let pc = 0; pc < insns.length; pc++) {
    const { code, jt, jf, k } = insns[pc]!
    const cls = code & 0x07
    if (cls === 0x00) {
      // BPF_LD
      const mode = code & 0xe0
      if (mode === 0x20 && (code & 0x18) === 0x00)
        a = data.readUInt32LE(k) // W ABS
      else if (mode === 0x00)
        a = k >>> 0 // IMM
      else if (mode === 0x60) a = mem[k]!
      else throw new Error(`unsupported load ${code.toString(16)} at ${pc}`)
    } else if (cls === 0x01) {
      if ((code & 0xe0) === 0x00) x = k >>> 0
      else if ((code & 0xe0) === 0x60) x = mem[k]!
      else throw new Error(`unsupported ldx ${code.toString(16)}`)
    } else if (cls === 0x02) mem[k] = a
    else if (cls === 0x03) mem[k] = x
    else if (cls === 0x04) {
      const src = code & 0x08 ? x : k >>> 0
      const op = code & 0xf0
      if (op === 0x00) a = (a + src) >>> 0
      else if (op === 0x10) a = (a - src) >>> 0
      else if (op === 0x50) a = (a & src) >>> 0
      else if (op === 0x40) a = (a | src) >>> 0
      else if (op === 0x60) a = (a << src) >>> 0
      else if (op === 0x70) a = a >>> src
      else throw new Error(`unsupported alu ${code.toString(16)}`)
    } else if (cls === 0x05) {
      const op = code & 0xf0
      const src = code & 0x08 ? x : k >>> 0
      if (op === 0x00) {
        pc += k
        continue
      }
      let hit: boolean
      if (op === 0x10) hit = a === src
      else if (op === 0x20) hit = a > src
      else if (op === 0x30) hit = a >= src
      else if (op === 0x40) hit = (a & src) !== 0
      else throw new Error(`unsupported jump ${code.toString(16)}`)
      pc += hit ? jt : jf
    } else if (cls === 0x06) return (code & 0x18) === 0x10 ? a : k >>> 0
    else if (cls === 0x07) {
      if (code === 0x07) x = a
      else if (code === 0x87) a = x
      else throw new Error(`unsupported misc ${code.toString(16)}`)
    }
  }
  throw new Error('the program fell off its end without returning')
}

const ALLOW = 'allow'
const KILL = 'kill'
function verdict(p: Program, audit: number, nr: number, args: number[] = []): string | number {
  const r = runBpf(p.insns, seccompData(audit, nr, args)) >>> 0
  if (r === 0x7fff0000) return ALLOW
  if (r === 0x80000000) return KILL
  if ((r & 0xffff0000) === 0x00050000) return r & 0xffff // SECCOMP_RET_ERRNO: the errno
  throw new Error(`unexpected action 0x${r.toString(16)}`)
}

function checkArch(arch: Arch, native: number, foreign: number, other: Arch, otherAudit: number) {
  const n = NR[arch]
  const off = dump(arch, false, false)
  const on = dump(arch, true, true)
  assert.equal(off.arch, native, `the ${arch} build admits ${arch} calls`)
  assert.ok(off.insns.length > 20 && off.insns.length <= 256)
  const v = (nr: number, args?: number[]) => verdict(off, native, nr, args)

  // Allowed: everyday calls, threads, unix sockets, punching a hole.
  for (const nr of [n.read, n.write, n.openat, n.mmap, n.nanosleep])
    assert.equal(v(nr), ALLOW, `${arch} nr ${nr}`)
  assert.equal(v(n.clone, [CLONE_THREAD_FLAGS]), ALLOW, 'pthread_create')
  assert.equal(v(n.socket, [AF_UNIX, SOCK_STREAM]), ALLOW)
  assert.equal(v(n.fallocate, [3, 3]), ALLOW, 'FALLOC_FL_PUNCH_HOLE|KEEP_SIZE')

  // Refused by this architecture's numbers, each with its errno.
  for (const nr of [
    n.ptrace,
    n.mount,
    n.pivot_root,
    n.unshare,
    n.keyctl,
    n.bpf,
    n.process_vm_readv,
    n.io_uring_setup,
  ])
    assert.equal(v(nr), EPERM, `${arch} nr ${nr} is refused`)
  assert.equal(v(n.clone3), ENOSYS, 'clone3 answers ENOSYS so glibc falls back to clone')
  assert.equal(v(n.clone, [SIGCHLD]), EPERM, 'a new process without the processes grant')
  assert.equal(v(n.clone, [CLONE_THREAD_FLAGS | CLONE_NEWUSER]), EPERM, 'a namespace')
  assert.equal(v(n.execve), EPERM)
  assert.equal(v(n.execveat), EPERM)
  assert.equal(v(n.socket, [AF_INET, SOCK_STREAM]), EAFNOSUPPORT, 'no network sockets with the network off')
  assert.equal(v(n.socketpair, [AF_INET, SOCK_STREAM]), EAFNOSUPPORT)
  assert.equal(v(n.sendto, [3, 0, 0, MSG_FASTOPEN]), EPERM, 'TCP Fast Open')
  assert.equal(v(n.sendmsg, [3, 0, MSG_FASTOPEN]), EPERM)
  assert.equal(v(n.sendmmsg, [3, 0, 0, MSG_FASTOPEN]), EPERM)
  assert.equal(v(n.setsockopt, [3, 6, 30]), EPERM, 'TCP_FASTOPEN_CONNECT')
  assert.equal(v(n.fallocate, [3, 0]), EOPNOTSUPP, 'reserving blocks')

  // Set-id bits: ordinary modes pass, a mode carrying S_ISUID or S_ISGID is refused, on the
  // *at calls both architectures have. mkdirat needs no rule (the kernel drops the bits).
  for (const mode of [0o755, 0o644, 0o1777, 0o700]) {
    assert.equal(v(n.fchmod, [3, mode]), ALLOW, `fchmod ${mode.toString(8)}`)
    assert.equal(v(n.fchmodat, [AT_FDCWD, 0, mode]), ALLOW, `fchmodat ${mode.toString(8)}`)
    assert.equal(v(n.fchmodat2, [AT_FDCWD, 0, mode, 0]), ALLOW)
    assert.equal(
      v(n.openat, [AT_FDCWD, 0, O_WRONLY | O_CREAT, mode]),
      ALLOW,
      `openat O_CREAT ${mode.toString(8)}`,
    )
    assert.equal(v(n.mknodat, [AT_FDCWD, 0, S_IFREG | mode, 0]), ALLOW)
  }
  for (const bits of [S_ISUID, S_ISGID, S_ISUID | S_ISGID]) {
    const mode = 0o755 | bits
    const what = `mode ${mode.toString(8)}`
    assert.equal(v(n.fchmod, [3, mode]), EPERM, `fchmod ${what} is refused`)
    assert.equal(v(n.fchmodat, [AT_FDCWD, 0, mode]), EPERM, `fchmodat ${what}`)
    assert.equal(v(n.fchmodat2, [AT_FDCWD, 0, mode, 0]), EPERM, `fchmodat2 ${what}`)
    assert.equal(v(n.openat, [AT_FDCWD, 0, O_WRONLY | O_CREAT, mode]), EPERM, `openat O_CREAT ${what}`)
    assert.equal(v(n.openat, [AT_FDCWD, 0, O_WRONLY | O_TMPFILE, mode]), EPERM, `openat O_TMPFILE ${what}`)
    assert.equal(v(n.mknodat, [AT_FDCWD, 0, S_IFREG | mode, 0]), EPERM, `mknodat ${what}`)
    // Only the low 16 bits are a mode (umode_t): high bits of the argument change nothing.
    assert.equal(v(n.fchmod, [3, 0x10000 | mode]), EPERM)
    // Without O_CREAT or O_TMPFILE the kernel ignores the mode: nothing to refuse.
    assert.equal(v(n.openat, [AT_FDCWD, 0, O_WRONLY, mode]), ALLOW, `openat without O_CREAT, ${what}`)
    assert.equal(v(n.mkdirat, [AT_FDCWD, 0, 0o777 | bits]), ALLOW, 'mkdirat: the kernel drops the bits')
  }
  assert.equal(v(n.openat2), ENOSYS, 'openat2 answers ENOSYS (its mode is out of reach) so libc falls back')

  // The other architecture's numbers name other calls here: its ptrace is an allowed call.
  assert.notEqual(NR[other].ptrace, n.ptrace)
  assert.equal(v(NR[other].ptrace), ALLOW, `${other}'s ptrace number is not ptrace on ${arch}`)
  assert.equal(v(n.setresuid), ALLOW)

  // Any other entry point is killed before a number is looked at.
  assert.equal(verdict(off, foreign, n.read), KILL, `${arch}: the compat entry point is killed`)
  assert.equal(verdict(off, otherAudit, n.read), KILL)

  // With processes and network granted.
  const w = (nr: number, args?: number[]) => verdict(on, native, nr, args)
  assert.equal(w(n.clone, [SIGCHLD]), ALLOW)
  assert.equal(w(n.execve), ALLOW)
  assert.equal(w(n.socket, [AF_INET, SOCK_STREAM]), ALLOW)
  assert.equal(w(n.socket, [AF_INET, SOCK_RAW]), EPERM, 'raw sockets stay refused')
  assert.equal(w(n.clone, [SIGCHLD | CLONE_NEWUSER]), EPERM)
  assert.equal(w(n.ptrace), EPERM)
  return { off, on }
}

test('x86_64: the filter admits x86_64 calls only and refuses by x86_64 numbers', () => {
  const { off, on } = checkArch('x86_64', AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, 'aarch64', AUDIT_ARCH_AARCH64)
  const n = NR.x86_64
  assert.equal(verdict(off, AUDIT_ARCH_X86_64, 0x40000000 | n.read), EPERM, 'x32 calls are refused')
  assert.equal(verdict(off, AUDIT_ARCH_X86_64, n.fork), EPERM)
  assert.equal(verdict(off, AUDIT_ARCH_X86_64, n.vfork), EPERM)
  assert.equal(verdict(on, AUDIT_ARCH_X86_64, n.fork), ALLOW)
  // x86_64's own non-*at calls carry the mode in another argument.
  const x = (nr: number, args: number[]) => verdict(off, AUDIT_ARCH_X86_64, nr, args)
  assert.equal(x(n.chmod, [0, 0o755]), ALLOW)
  assert.equal(x(n.chmod, [0, 0o4755]), EPERM, 'chmod 4755')
  assert.equal(x(n.chmod, [0, 0o2755]), EPERM, 'chmod 2755')
  assert.equal(x(n.creat, [0, 0o644]), ALLOW)
  assert.equal(x(n.creat, [0, 0o4755]), EPERM, 'creat 4755')
  assert.equal(x(n.mknod, [0, S_IFREG | 0o644, 0]), ALLOW)
  assert.equal(x(n.mknod, [0, S_IFREG | 0o6755, 0]), EPERM, 'mknod set-id')
  assert.equal(x(n.open, [0, O_WRONLY | O_CREAT, 0o644]), ALLOW)
  assert.equal(x(n.open, [0, O_WRONLY | O_CREAT, 0o4755]), EPERM, 'open O_CREAT 4755')
  assert.equal(x(n.open, [0, O_WRONLY, 0o4755]), ALLOW, 'open without O_CREAT')
  // The rules hold with processes and network granted too (the tool jails' filter).
  assert.equal(verdict(on, AUDIT_ARCH_X86_64, n.chmod, [0, 0o4755]), EPERM)
})

test('aarch64: the filter admits aarch64 calls only and refuses by aarch64 numbers', {
  skip: crossSkip,
}, () => {
  const { off, on } = checkArch('aarch64', AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM, 'x86_64', AUDIT_ARCH_X86_64)
  const n = NR.aarch64
  // x86_64's socket (41) is pivot_root here, and its mount (165) is getrusage.
  assert.equal(verdict(off, AUDIT_ARCH_AARCH64, NR.x86_64.socket), EPERM)
  assert.equal(verdict(off, AUDIT_ARCH_AARCH64, NR.x86_64.mount), ALLOW)
  // No x32 on arm64: a number with bit 30 set is not special-cased (it is no syscall, and allowed
  // through to the kernel's ENOSYS).
  assert.equal(verdict(off, AUDIT_ARCH_AARCH64, 0x40000000 | n.read), ALLOW)
  // The set-id rules hold with processes and network granted too (the tool jails' filter).
  assert.equal(verdict(on, AUDIT_ARCH_AARCH64, n.fchmodat, [AT_FDCWD, 0, 0o4755]), EPERM)
})
