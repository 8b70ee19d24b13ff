// A sandbox session calling extension tools from a block, through the host.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { closeRegistrationWorkers } from '../../src/extensions/registration.js'
import { ExtensionRegistry } from '../../src/extensions/registry.js'
import { openStore } from '../../src/persistence/store.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import type { Tool } from '../../src/tools/types.js'
import { extension, python, tempLayout, write } from './helpers.js'

const { base, home, project, global, local } = tempLayout('ext-session')
const root = join(base, 'workspace')
mkdirSync(root)
// Outside every sandbox root: the sandbox cannot read it, the trusted worker can.
const secret = join(base, 'outside', 'secret.txt')
write(secret, 'only for trusted code')

write(
  join(global, 'tally.py'),
  extension(
    'tally',
    `import os\n\ndef bump(by=1):\n    """Adds to a durable counter."""\n    n = vis.state.get("n", 0) + by\n    vis.state.set("n", n)\n    return n\n\ndef whoami():\n    """The process this runs in."""\n    return os.getpid()\n\ndef read(path):\n    """Reads a file the sandbox cannot."""\n    with open(path) as f:\n        return f.read()\n`,
    ', tools=[bump, whoami, read]',
  ),
)
write(
  join(local, 'guard', 'extension.py'),
  extension(
    'guard',
    `def no_secrets(args):\n    if "secret" in str(args[0]):\n        raise vis.Refuse("notes about secrets are not allowed")\n`,
    ', op_hooks=[vis.before("note", no_secrets)], ctx=lambda: {"mode": "strict", "pid": __import__("os").getpid()}',
  ),
)

const notes: string[] = []
const note: Tool = {
  name: 'note',
  doc: 'Keeps a note on the host.',
  signature: '(text)',
  run: async (args) => {
    notes.push(String(args[0]))
    return notes.length
  },
}

let rt: Runtime | undefined
let reg: ExtensionRegistry | undefined
let store = openStore({ home })
after(async () => {
  await reg?.close()
  await rt?.close()
  await closeRegistrationWorkers()
  store.close()
  rmSync(base, { recursive: true, force: true })
})

async function start(): Promise<Session> {
  rt = await createRuntime({ home, python, pool: { size: 0 }, defaultTools: false })
  reg = await ExtensionRegistry.open({ home, project, python, store })
  assert.deepEqual(reg.warnings(), [])
  const s = await rt.createSession({ roots: [root] })
  await reg.bindInto(s, [note])
  return s
}

test('a block calls extension tools; they run in a trusted worker that reads what the sandbox cannot', async () => {
  const s = await start()
  const r = await s.runBlock(
    `print(await tally_bump(), await tally_bump(by=2))\npid = await tally_whoami()\nprint(await tally_read(${JSON.stringify(secret)}))`,
  )
  assert.equal(r.error, undefined, JSON.stringify(r.error))
  assert.equal(r.stdout, '1 3\nonly for trusted code\n')
  const pid = (await s.runBlock('print(pid)')).stdout?.trim()
  assert.notEqual(Number(pid), s.pid, 'not the sandbox process')
  assert.equal(Number(pid), await reg!.sessionWorkerPid(s.id), "the session's own trusted worker")
  const denied = await s.runBlock(
    `try:\n    open(${JSON.stringify(secret)}).read()\n    print("read")\nexcept Exception as e:\n    print("denied", type(e).__name__)`,
  )
  assert.match(denied.stdout ?? '', /^denied /)
})

test('a hook refuses a host tool called from a block; allowed calls go through', async () => {
  const s = rt!.sessions()[0]!
  const r = await s.runBlock(
    `print(await note("groceries"))\ntry:\n    await note("the secret plan")\nexcept Exception as e:\n    print("refused:", e)`,
  )
  assert.equal(r.error, undefined, JSON.stringify(r.error))
  assert.match(r.stdout ?? '', /^1\nrefused: .*notes about secrets are not allowed/)
  assert.deepEqual(notes, ['groceries'])
})

test('extension state survives a restart of the whole host side', async () => {
  const s = rt!.sessions()[0]!
  await reg!.endSession(s.id)
  await reg!.close()
  await rt!.close()
  await closeRegistrationWorkers()
  store.close()
  store = openStore({ home })
  const again = await start()
  const r = await again.runBlock('print(await tally_bump())')
  assert.equal(r.stdout, '4\n')
})

test("the extensions' ctx slices reach the block as the session dict", async () => {
  const s = rt!.sessions()[0]!
  const context = await reg!.sessionContext(s.id)
  assert.equal((context.guard as { mode: string }).mode, 'strict')
  const r = await s.runBlock('print(session["guard"]["mode"], session["guard"]["pid"])', { context })
  assert.equal(r.stdout, `strict ${await reg!.sessionWorkerPid(s.id)}\n`)
})

test('extension directories inside a root are masked in the jail: not writable, not readable, not movable', async () => {
  const hidden = reg!.maskFor([project])
  assert.deepEqual(hidden, [local])
  const exposed = await rt!.createSession({ roots: [project], hidden })
  try {
    await reg!.bindInto(exposed)
    const r = await exposed.runBlock(
      [
        'import os',
        `d = ${JSON.stringify(local)}`,
        'print("listing", sorted(os.listdir(d)))',
        'for attempt in ("write", "rename", "rmdir"):',
        '    try:',
        '        if attempt == "write":',
        '            open(os.path.join(d, "evil.py"), "w").write("import vis")',
        '        elif attempt == "rename":',
        `            os.rename(${JSON.stringify(join(project, '.vis'))}, ${JSON.stringify(join(project, 'moved'))})`,
        '        else:',
        '            os.rmdir(d)',
        '        print(attempt, "succeeded")',
        '    except OSError as e:',
        '        print(attempt, "failed", type(e).__name__)',
        `open(${JSON.stringify(join(project, 'notes.txt'))}, "w").write("the rest of the root stays writable")`,
      ].join('\n'),
    )
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.match(r.stdout ?? '', /^listing \[\]\nwrite failed \w+\nrename failed \w+\nrmdir failed \w+\n$/)
    // The host still sees the real directory, with nothing planted in it.
    assert.ok(existsSync(join(local, 'guard', 'extension.py')))
    assert.ok(!existsSync(join(local, 'evil.py')))
    assert.ok(!existsSync(join(project, 'moved')))
    assert.equal(readFileSync(join(project, 'notes.txt'), 'utf8'), 'the rest of the root stays writable')
  } finally {
    await exposed.dispose()
  }
})

test('a missing extension directory inside a root is created so the mask exists before a block could make it', async () => {
  const other = join(base, 'other-project')
  mkdirSync(other)
  const r2 = await ExtensionRegistry.open({ home, project: other, python })
  try {
    const hidden = r2.maskFor([base])
    assert.deepEqual(hidden.sort(), [global, join(other, '.vis', 'extensions')].sort())
    assert.ok(existsSync(join(other, '.vis', 'extensions')))
  } finally {
    await r2.close()
  }
})

test('a session spawned without the masks gets no extension tools', async () => {
  const bare = await rt!.createSession({ roots: [project] })
  try {
    await assert.rejects(reg!.bindInto(bare), (e: { code?: string; message: string }) => {
      assert.equal(e.code, 'ext.dirs-exposed')
      assert.ok(e.message.includes(local))
      return true
    })
  } finally {
    await bare.dispose()
  }
})

test('a root inside an extension directory cannot be masked and is refused', async () => {
  const inner = join(local, 'guard')
  assert.throws(
    () => reg!.maskFor([inner]),
    (e: { code?: string }) => e.code === 'ext.dirs-exposed',
  )
  // A root inside a project's .vis folder is refused before any session exists (root-guard.ts).
  await assert.rejects(rt!.createSession({ roots: [inner] }), (e: { code?: string; message: string }) => {
    assert.equal(e.code, 'policy.root-in-vis-folder')
    assert.ok(e.message.includes(inner))
    return true
  })
  assert.deepEqual(reg!.exposedDirs([home]), [global])
  assert.deepEqual(reg!.exposedDirs([root]), [])
})
