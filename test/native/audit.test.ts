// The audit hook: fail-closed before a policy, the policy's rules after it, resolved
// paths (symlinks, .., relative after chdir), and a policy that can only tighten.
import assert from 'node:assert/strict'
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { before, test } from 'node:test'
import { loadPython, type Outcome, type PythonRuntime } from '../../src/native/index.js'
import { tempHome } from './helpers.js'

tempHome()
let rt: PythonRuntime
const base = realpathSync(mkdtempSync(join(tmpdir(), 'vis-audit-')))
const ro = join(base, 'ro')
const rw = join(base, 'rw')
const outside = join(base, 'outside')
const py = (s: string) => JSON.stringify(s)

before(async () => {
  for (const d of [ro, rw, outside, join(rw, 'sub')]) mkdirSync(d, { recursive: true })
  writeFileSync(join(ro, 'data.txt'), 'read me')
  writeFileSync(join(outside, 'secret.txt'), 'secret')
  symlinkSync(join(outside, 'secret.txt'), join(rw, 'escape-link'))
  symlinkSync(join(outside, 'created-through-link.txt'), join(rw, 'dangling-link'))
  rt = await loadPython()
})

function denied(o: Outcome, pattern: RegExp): void {
  assert.equal(o.ok, false, `expected a denial, got ${JSON.stringify(o)}`)
  if (o.ok) return
  assert.equal(o.error.type, 'PermissionError', JSON.stringify(o.error))
  assert.match(o.error.message, pattern)
}

function allowed(o: Outcome): void {
  assert.equal(o.ok, true, JSON.stringify(o))
}

test('before a policy: the distribution and stdlib are readable, other files are not', async () => {
  allowed(await rt.exec('import os, json, decimal\nwith open(os.__file__) as f:\n    f.read(10)'))
  denied(await rt.exec('open("/etc/passwd")'), /reading '\/etc\/passwd' is not allowed \(no sandbox policy/)
  denied(await rt.exec(`open(${py(join(ro, 'data.txt'))})`), /no sandbox policy/)
  denied(await rt.exec(`open(${py(join(rw, 'new.txt'))}, "w")`), /writing .*no sandbox policy/)
  denied(await rt.exec('import os\nos.listdir("/etc")'), /os\.listdir/)
})

test('before a policy: sockets, processes and ctypes are refused; a private socketpair works', async () => {
  denied(await rt.exec('import socket\nsocket.socket(socket.AF_INET, socket.SOCK_STREAM)'), /network access/)
  denied(await rt.exec('import socket\nsocket.getaddrinfo("localhost", 80)'), /socket\.getaddrinfo/)
  allowed(await rt.exec('import socket\na, b = socket.socketpair()\na.send(b"x")\nassert b.recv(1) == b"x"'))
  allowed(await rt.exec('import asyncio\nasyncio.run(asyncio.sleep(0))'))
  denied(await rt.exec('import subprocess\nsubprocess.run(["true"])'), /processes .*subprocess\.Popen/)
  denied(await rt.exec('import os\nos.system("true")'), /os\.system/)
  denied(await rt.exec('import ctypes'), /ctypes/)
})

test('a native extension from outside the distribution cannot load', async () => {
  const dynload = join(rt.distribution.root, 'lib', `python${rt.minor}`, 'lib-dynload')
  const so = readdirSync(dynload).find((n) => n.startsWith('cmath.'))!
  copyFileSync(join(dynload, so), join(outside, so))
  const o = await rt.exec(
    `import importlib.util\nspec = importlib.util.spec_from_file_location("cmath", ${py(join(outside, so))})\nimportlib.util.module_from_spec(spec)`,
  )
  denied(o, /native extension .* only extensions inside the Python distribution/)
})

test('the hook survives re-entry through __fspath__ and many threads at once', async () => {
  const o = await rt.exec(
    [
      'import os, threading',
      'class P:',
      '    def __fspath__(self):',
      '        open(os.__file__).close()  # a nested audit event inside the hook',
      '        return os.__file__',
      'def worker():',
      '    for _ in range(200):',
      '        open(P()).close()',
      'ts = [threading.Thread(target=worker) for _ in range(4)]',
      'for t in ts: t.start()',
      'for t in ts: t.join()',
    ].join('\n'),
  )
  allowed(o)
})

test('guest code cannot add its own audit hook', async () => {
  allowed(
    await rt.exec(
      'import sys\nseen = []\nsys.addaudithook(lambda e, a: seen.append(e))\ncompile("1", "x", "eval")',
    ),
  )
  const seen = await rt.eval('seen')
  assert.deepEqual(seen.ok && seen.value, [])
})

test('a policy opens its roots: read-only reads, read-write writes', async () => {
  rt.installPolicy({
    readOnly: [ro],
    readWrite: [rw],
    network: { enabled: false },
    processes: false,
    ctypes: false,
  })
  allowed(await rt.exec(`assert open(${py(join(ro, 'data.txt'))}).read() == "read me"`))
  allowed(await rt.exec(`open(${py(join(rw, 'out.txt'))}, "w").write("hi")`))
  allowed(
    await rt.exec(
      `import os\nos.mkdir(${py(join(rw, 'd'))})\nos.rename(${py(join(rw, 'out.txt'))}, ${py(join(rw, 'd', 'o.txt'))})`,
    ),
  )
  denied(await rt.exec(`open(${py(join(ro, 'data.txt'))}, "a")`), /writing .* outside the read-write roots/)
  denied(await rt.exec(`open(${py(join(ro, 'x'))}, "w")`), /outside the read-write roots/)
  denied(await rt.exec('open("/etc/passwd")'), /outside the readable roots/)
  denied(await rt.exec(`import os\nos.remove(${py(join(outside, 'secret.txt'))})`), /os\.remove/)
  denied(
    await rt.exec(`import os\nos.rename(${py(join(rw, 'd', 'o.txt'))}, ${py(join(outside, 'moved.txt'))})`),
    /os\.rename/,
  )
  denied(await rt.exec(`import shutil\nshutil.rmtree(${py(outside)})`), /shutil\.rmtree/)
})

test('symlink and .. escapes are checked on the resolved path', async () => {
  denied(await rt.exec(`open(${py(join(rw, 'escape-link'))})`), /resolves to '.*outside\/secret\.txt'/)
  denied(await rt.exec(`open(${py(join(rw, 'dangling-link'))}, "w")`), /created-through-link\.txt/)
  denied(await rt.exec(`open(${py(`${rw}/sub/../../outside/secret.txt`)})`), /outside\/secret\.txt/)
  denied(await rt.exec(`open(${py(`${rw}/missing/../../outside/new.txt`)}, "w")`), /cannot be resolved/)
  allowed(await rt.exec(`open(${py(`${rw}/sub/../inside.txt`)}, "w").close()`))
})

test('relative paths are resolved against the current directory after chdir', async () => {
  allowed(await rt.exec(`import os\nos.chdir(${py(rw)})\nopen("rel.txt", "w").close()`))
  denied(await rt.exec('open("../outside/secret.txt")'), /outside\/secret\.txt/)
  denied(
    await rt.exec('import os\nos.chdir("/etc")\nopen("passwd")'),
    /'passwd' \(resolves to '\/etc\/passwd'\)/,
  )
  allowed(await rt.exec(`import os\nos.chdir(${py(rw)})`))
})

test('network, processes and ctypes stay off when the policy says so', async () => {
  denied(
    await rt.exec('import socket\nsocket.create_connection(("127.0.0.1", 9))'),
    /network access is disabled by the sandbox policy/,
  )
  denied(await rt.exec('import subprocess\nsubprocess.run(["true"])'), /disabled by the sandbox policy/)
  // `import ctypes` opens only the process itself (numpy imports it); any other library,
  // and any call through ctypes, stays refused.
  denied(await rt.exec('import ctypes\nctypes.CDLL("libc.so.6")'), /ctypes is disabled.*\[ctypes\.dlopen\]/)
  denied(await rt.exec('import ctypes\nctypes.pythonapi.Py_GetVersion()'), /ctypes is disabled/)
})

test('a policy cannot be loosened, only tightened', async () => {
  const base = { readOnly: [], readWrite: [rw], network: { enabled: false }, processes: false, ctypes: false }
  for (const looser of [
    { ...base, readOnly: [ro], readWrite: [rw, outside] },
    { ...base, network: { enabled: true } },
    { ...base, processes: true },
  ]) {
    assert.throws(() => rt.installPolicy(looser), { code: 'native.policy-loosen' }, JSON.stringify(looser))
  }
  denied(await rt.exec(`open(${py(join(outside, 'x.txt'))}, "w")`), /outside the read-write roots/)
  rt.installPolicy({
    readOnly: [],
    readWrite: [join(rw, 'sub')],
    network: { enabled: false },
    processes: false,
    ctypes: false,
  })
  allowed(await rt.exec(`open(${py(join(rw, 'sub', 'ok.txt'))}, "w").close()`))
  denied(await rt.exec(`open(${py(join(rw, 'top.txt'))}, "w")`), /outside the read-write roots/)
  denied(await rt.exec(`open(${py(join(ro, 'data.txt'))})`), /outside the readable roots/)
})
