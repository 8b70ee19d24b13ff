// Everyday files and hard links (issue 13, section 5), through real confined sessions.
// - /dev/null, /dev/zero, /dev/full take writes and /dev/urandom, /dev/random give bytes in every
//   jail; other devices stay out (refused by the hook, absent from the jail's /dev).
// - A file inside a root with more than one hard link is not writable through the root, by the
//   guest or by the host file tools, and the error says why; with one link it is.
import assert from 'node:assert/strict'
import { linkSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'

const home = mkdtempSync(join(tmpdir(), 'vis-files-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-files-root-'))
const outside = mkdtempSync(join(tmpdir(), 'vis-files-outside-'))
process.env.VIS_HOME = home
const python = process.env.VIS_PYTHON_VERSION

after(() => {
  for (const d of [home, root, outside]) rmSync(d, { recursive: true, force: true })
})

const DEVICES_OK = [
  [
    'write /dev/null (the subprocess.DEVNULL / logging idiom)',
    "with open(os.devnull, 'w') as f:\n    print(f.write('gone'))",
    '4\n',
  ],
  [
    'a logging handler on /dev/null',
    "import logging\nh = logging.FileHandler('/dev/null')\nlogging.getLogger('t').addHandler(h)\nlogging.getLogger('t').warning('x')\nh.close()\nprint('logged')",
    'logged\n',
  ],
  ['read /dev/null', "print(repr(open('/dev/null', 'rb').read()))", "b''\n"],
  [
    'read and write /dev/zero',
    "print(open('/dev/zero', 'rb').read(4), open('/dev/zero', 'wb').write(b'abc'))",
    "b'\\x00\\x00\\x00\\x00' 3\n",
  ],
  [
    'write /dev/full fails as the disk-full device does',
    "import errno\ntry:\n    with open('/dev/full', 'w') as f:\n        f.write('x')\nexcept OSError as e:\n    print(e.errno == errno.ENOSPC)",
    'True\n',
  ],
  [
    'read /dev/urandom and /dev/random',
    "print(len(open('/dev/urandom', 'rb').read(16)), len(open('/dev/random', 'rb').read(8)), len(os.urandom(4)))",
    '16 8 4\n',
  ],
] as const

const DEVICES_REFUSED = [
  ['write /dev/urandom', "open('/dev/urandom', 'wb')"],
  ['read /dev/sda', "open('/dev/sda', 'rb')"],
  ['read /dev/mem', "open('/dev/mem', 'rb')"],
  ['write /dev/tty', "open('/dev/tty', 'w')"],
] as const

describe('everyday devices in a confined session', () => {
  let rt: Runtime
  let s: Session
  let kernel: Runtime
  let k: Session
  before(async () => {
    rt = await createRuntime({ home, python, pool: { size: 0 } })
    s = await rt.createSession({ roots: [root] })
    await s.runBlock('import os')
    // The jail alone (an audit policy that refuses nothing): what it shows, and what it does not.
    kernel = await createRuntime({ home, python, pool: { size: 0 }, auditPolicy: 'permissive' })
    k = await kernel.createSession({ roots: [root] })
    await k.runBlock('import os')
  })
  after(async () => {
    await rt.close()
    await kernel.close()
  })

  for (const [name, code, expected] of DEVICES_OK) {
    test(`works: ${name}`, async () => {
      const r = await s.runBlock(code)
      assert.equal(r.error, undefined, JSON.stringify(r.error))
      assert.equal(r.stdout, expected)
      // The jail by itself lets it through too.
      assert.equal((await k.runBlock(code)).stdout, expected)
    })
  }

  for (const [name, code] of DEVICES_REFUSED) {
    test(`refused: ${name}`, async () => {
      const r = await s.runBlock(code)
      assert.match(
        r.error?.message ?? '',
        /is not allowed: it is outside the (readable|read-write) roots/,
        name,
      )
      // Without the hook the jail still refuses: the device is not in its /dev, or not writable.
      const j = await k.runBlock(
        `try:\n    ${code}\nexcept OSError as e:\n    print(type(e).__name__, e.errno)`,
      )
      assert.match(j.stdout ?? '', /^(FileNotFoundError 2|PermissionError 13)\n$/, JSON.stringify(j))
    })
  }
})

describe('a hard-linked file inside a root is not writable through it', () => {
  let rt: Runtime
  let s: Session
  const secret = join(outside, 'secret.txt')
  const planted = join(root, 'planted.txt')
  before(async () => {
    writeFileSync(secret, 'outside, untouched\n', { mode: 0o644 })
    // Planted on the host side: the jail cannot make a link to a file it cannot see.
    linkSync(secret, planted)
    rt = await createRuntime({ home, python, pool: { size: 0 } })
    s = await rt.createSession({ roots: [root] })
    await s.runBlock(`import os, pathlib\nP = ${JSON.stringify(planted)}`)
  })
  after(async () => {
    await rt.close()
  })

  const guestWrites = [
    ["open(P, 'w')", 'open'],
    ["open(P, 'a').write('x')", 'open'],
    ["open(P, 'r+')", 'open'],
    ['os.open(P, os.O_WRONLY | os.O_TRUNC)', 'open'],
    ["pathlib.Path(P).write_text('x')", 'open'],
    ['os.truncate(P, 0)', 'os.truncate'],
    ['os.chmod(P, 0o777)', 'os.chmod'],
    ['os.utime(P, (0, 0))', 'os.utime'],
  ] as const

  for (const [code, event] of guestWrites) {
    test(`the guest is refused: ${code}`, async () => {
      const r = await s.runBlock(code)
      assert.match(
        r.error?.message ?? '',
        /writing '.*planted\.txt' is not allowed: it has 2 hard links, and a write through the root would also change the other links/,
      )
      assert.match(r.error?.message ?? '', new RegExp(`\\[${event.replace('.', '\\.')}\\]`))
      assert.equal(readFileSync(secret, 'utf8'), 'outside, untouched\n')
      assert.equal(statSync(secret).mode & 0o777, 0o644)
    })
  }

  test('the host file tools are refused, and say why', async () => {
    for (const code of [
      "write('planted.txt', 'x')",
      "patch([{'path': 'planted.txt', 'search': 'untouched', 'replace': 'changed'}])",
    ]) {
      const r = await s.runBlock(code)
      assert.match(
        r.error?.message ?? '',
        /'planted\.txt' has 2 hard links, so changing it through the root would also change the other links/,
        code,
      )
    }
    assert.equal(readFileSync(secret, 'utf8'), 'outside, untouched\n')
    assert.equal(readFileSync(planted, 'utf8'), 'outside, untouched\n', 'the link is still there, unchanged')
  })

  test('a file with one link is writable, by the guest and the tools; reading the linked file works', async () => {
    const r = await s.runBlock(
      [
        `own = ${JSON.stringify(join(root, 'own.txt'))}`,
        "open(own, 'w').write('mine\\n')",
        "open(own, 'a').write('more\\n')",
        "write('tool.txt', 'by the tool\\n')",
        "patch([{'path': 'tool.txt', 'search': 'by the tool', 'replace': 'patched'}])",
        "print(open(own).read() + open('tool.txt').read() + open(P).read(), end='')",
      ].join('\n'),
    )
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.equal(r.stdout, 'mine\nmore\npatched\noutside, untouched\n')
  })

  test('once the other link is gone, the file is an ordinary one again', async () => {
    unlinkSync(secret)
    const r = await s.runBlock("open(P, 'a').write('now mine\\n')\nprint(open(P).read(), end='')")
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.equal(r.stdout, 'outside, untouched\nnow mine\n')
  })
})
