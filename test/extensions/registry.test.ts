// Loading, clashing, failing and reloading trusted extensions, with real trusted workers.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { extensionChecks } from '../../src/extensions/doctor.js'
import { closeRegistrationWorkers } from '../../src/extensions/registration.js'
import { ExtensionRegistry } from '../../src/extensions/registry.js'
import { openStore } from '../../src/persistence/store.js'
import type { Tool, ToolContext } from '../../src/tools/types.js'
import { extension, python, remove, tempLayout, write } from './helpers.js'

const { base, home, project, global, local } = tempLayout('ext-registry')
const open: ExtensionRegistry[] = []
after(async () => {
  await Promise.all(open.map((r) => r.close()))
  await closeRegistrationWorkers()
  rmSync(base, { recursive: true, force: true })
})

async function registry(opts: { store?: ReturnType<typeof openStore> } = {}): Promise<ExtensionRegistry> {
  const r = await ExtensionRegistry.open({ home, project, python, ...opts })
  open.push(r)
  return r
}

function ctx(sessionId: string): ToolContext {
  return { sessionId, roots: [], signal: new AbortController().signal, resources: undefined as never }
}

function tool(r: ExtensionRegistry, name: string): Tool {
  const t = r.tools().find((x) => x.name === name)
  assert.ok(
    t,
    `tool ${name} is offered; offered: ${r
      .tools()
      .map((x) => x.name)
      .join(', ')}`,
  )
  return t
}

// The good files every test starts from.
write(
  join(global, 'greeter.py'),
  extension(
    'greeter',
    `import helperlib\n\ndef greet(name: str, punct: str = "!") -> str:\n    """Greets someone."""\n    return helperlib.hello(name) + punct\n\ndef wave(text=""):\n    """/wave: waves back."""\n    return "waves " + text\n`,
    ', version="1.0", description="says hello", tools=[greet], ctx={"greeting": "hi"}, prompt="Greet politely.", activation=["*.txt"], slash_commands=[wave]',
  ),
)
write(join(global, 'helperlib', '__init__.py'), 'def hello(n):\n    return "hello " + n\n')
write(
  join(local, 'packed', 'extension.py'),
  extension(
    'packed',
    `from . import util\nimport packed.util as again\n\ndef value():\n    """The helper's value."""\n    return [util.VALUE, again.VALUE]\n`,
    ', alias="pk", tools=[value], ctx=lambda: {"live": True}',
  ),
)
write(join(local, 'packed', 'util.py'), 'VALUE = 42\n')

test('files and packages load; tools appear as <alias>_<name> with their Python signatures', async () => {
  const r = await registry()
  assert.deepEqual(r.warnings(), [])
  assert.deepEqual(
    r.list().map((e) => [e.manifest.name, e.scope, e.kind]),
    [
      ['greeter', 'global', 'file'],
      ['packed', 'project', 'package'],
    ],
  )
  const greet = tool(r, 'greeter_greet')
  assert.equal(greet.signature, "(name, punct='!')")
  assert.equal(greet.doc, 'Greets someone.')
  assert.equal(await greet.run(['bob'], ctx('s1')), 'hello bob!')
  assert.equal(
    await greet.run(['bob', { punct: '?' }], ctx('s1')),
    'hello bob?',
    'keywords fold into a trailing dict',
  )
  assert.deepEqual(await tool(r, 'pk_value').run([], ctx('s1')), [42, 42])
  assert.deepEqual(await r.sessionContext('s1'), { greeter: { greeting: 'hi' }, pk: { live: true } })
  const m = r.get('greeter')!.manifest
  assert.deepEqual(
    [m.version, m.description, m.prompt, m.activation],
    ['1.0', 'says hello', 'Greet politely.', ['*.txt']],
  )
  assert.deepEqual(m.slash_commands, [{ name: 'wave', doc: '/wave: waves back.', signature: "(text='')" }])
  assert.equal(await r.runSlashCommand('s1', 'greeter', 'wave', ['hi']), 'waves hi')
  await assert.rejects(r.runSlashCommand('s1', 'greeter', 'nope'), /no slash command nope/)
  assert.equal(
    r.tools().some((t) => t.name === 'greeter_wave'),
    false,
    'slash commands are not model tools',
  )
  await assert.rejects(
    greet.run([1, 2, 3], ctx('s1')),
    (e: any) => e.code === 'ext.tool-failed' && /too many/.test(e.message),
  )
})

test('tools run in a per-session trusted worker, not in the host or the registration worker', async () => {
  const r = await registry()
  const a = await r.sessionWorkerPid('a')
  const b = await r.sessionWorkerPid('b')
  assert.notEqual(a, b)
  assert.notEqual(a, process.pid)
  await r.endSession('a')
  assert.throws(() => process.kill(a, 0), 'the ended session worker is gone')
})

test('a project extension wins a clash with a global one, by file name and by registered name', async () => {
  // [dir, file, extension name, tool body's answer, extra registration arguments]
  const fixtures: Array<[string, string, string, string, string]> = [
    // A file-name and registered-name clash.
    [global, 'dup.py', 'dup', 'global', ''],
    [local, 'dup.py', 'dup', 'project', ''],
    // A registered-name clash across file names, each with its own alias.
    [global, 'first.py', 'same', 'global', ', alias="sg"'],
    [local, 'second.py', 'same', 'project', ', alias="sp"'],
    // Same name and the same (derived) alias.
    [global, 'g3.py', 'twin', 'global', ''],
    [local, 'p3.py', 'twin', 'project', ''],
    // Two global files wanting one alias: the first keeps it.
    [global, 'h1.py', 'h1', 'h1', ', alias="hh"'],
    [global, 'h2.py', 'h2', 'h2', ', alias="hh"'],
  ]
  for (const [dir, file, name, answer, extra] of fixtures) {
    const tool = name === 'dup' ? 'who' : 'x'
    const doc = name === 'dup' ? 'Which one.' : 'x.'
    write(
      join(dir, file),
      extension(
        name,
        `def ${tool}():\n    """${doc}"""\n    return "${answer}"\n`,
        `${extra}, tools=[${tool}]`,
      ),
    )
  }
  const files = fixtures.map(([dir, file]) => join(dir, file))
  try {
    const r = await registry()
    assert.equal(await tool(r, 'twin_x').run([], ctx('s')), 'project')
    assert.equal(await tool(r, 'hh_x').run([], ctx('s')), 'h1')
    assert.equal(await tool(r, 'dup_who').run([], ctx('s')), 'project')
    assert.deepEqual(
      r.shadowed().map((s) => s.path),
      [join(global, 'dup.py')],
    )
    assert.equal(await tool(r, 'sp_x').run([], ctx('s')), 'project')
    assert.equal(
      r.tools().some((t) => t.name === 'sg_x'),
      false,
    )
    const w = new Map(r.warnings().map((x) => [x.path, x.reason]))
    assert.equal(w.size, 3)
    assert.match(
      w.get(join(global, 'first.py'))!,
      /name "same" is also used by project extension .*second\.py, which wins/,
    )
    assert.match(w.get(join(global, 'g3.py'))!, /name "twin" is also used by project extension .*p3\.py/)
    assert.match(w.get(join(global, 'h2.py'))!, /alias "hh" is already used by .*h1\.py/)
  } finally {
    for (const f of files) remove(f)
  }
})

test('every way a file can fail becomes a warning with the reason; the rest load', async () => {
  const bad: Record<string, [string, RegExp]> = {
    importerr: [
      'import vis\nimport no_such_module_here\n',
      /ModuleNotFoundError: No module named 'no_such_module_here' \(importerr\.py, line 2\)/,
    ],
    syntax: ['import vis\ndef broken(:\n', /SyntaxError.*\(syntax\.py, line 2\)/],
    raises: [
      'import vis\nraise RuntimeError("boom at import")\n',
      /RuntimeError: boom at import \(raises\.py, line 2\)/,
    ],
    unregistered: ['import vis\nx = 1\n', /never calls vis\.register/],
    nodoc: [extension('nodoc', 'def f():\n    return 1\n', ', tools=[f]'), /'f' has no docstring/],
    badalias: [extension('badalias', '', ', alias="not an identifier"'), /alias must be a Python identifier/],
    badtools: [extension('badtools', '', ', tools="nope"'), /tools must be a list of functions/],
    badctx: [extension('badctx', '', ', ctx={"k": object()}'), /ctx\['k'\]: a object cannot cross as JSON/],
    twice: [
      `import vis\nvis.register(vis.Extension(name="t1"))\nvis.register(vis.Extension(name="t2"))\n`,
      /registers 2 extensions/,
    ],
  }
  for (const [key, [text]] of Object.entries(bad)) write(join(global, `${key}.py`), text)
  try {
    const r = await registry()
    const reasons = new Map(r.warnings().map((w) => [w.key, w.reason]))
    for (const [key, [, re]] of Object.entries(bad)) assert.match(reasons.get(key) ?? '(no warning)', re, key)
    assert.equal(r.warnings().length, Object.keys(bad).length)
    const checks = await extensionChecks({ registry: r })
    assert.equal(checks.length, Object.keys(bad).length, 'vis doctor gets one warning per failed file')
    assert.ok(checks.every((c) => c.level === 'warn' && c.message.startsWith(global)))
    assert.equal(
      await tool(r, 'greeter_greet').run(['ann'], ctx('s')),
      'hello ann!',
      'the good ones still work',
    )
  } finally {
    for (const key of Object.keys(bad)) remove(join(global, `${key}.py`))
  }
})

test('reload picks up an edit; a broken edit keeps the previous good version, in old and new sessions', async () => {
  const path = join(global, 'edited.py')
  const version = (v: string) =>
    extension(
      'edited',
      `def which():\n    """Which version."""\n    return ${JSON.stringify(v)}\n`,
      ', tools=[which]',
    )
  write(path, version('v1'))
  try {
    const r = await registry()
    assert.equal(await tool(r, 'edited_which').run([], ctx('old')), 'v1')
    write(path, version('v2'))
    await r.reload()
    assert.deepEqual(r.warnings(), [])
    assert.equal(
      await tool(r, 'edited_which').run([], ctx('old')),
      'v2',
      'a live session worker sees the new version',
    )
    write(path, 'import vis\ndef broken(:\n')
    await r.reload()
    const w = r.warnings()
    assert.equal(w.length, 1)
    assert.equal(w[0]!.keptPrevious, true)
    assert.match(w[0]!.reason, /SyntaxError.*keeps working/)
    assert.equal(await tool(r, 'edited_which').run([], ctx('old')), 'v2')
    assert.equal(
      await tool(r, 'edited_which').run([], ctx('new')),
      'v2',
      'a new session realises the good version',
    )
    remove(path)
    await r.reload()
    assert.equal(
      r.tools().some((t) => t.name === 'edited_which'),
      false,
      'a deleted file is unloaded',
    )
  } finally {
    remove(path, { force: true })
  }
})

test('op hooks run before and after a host tool and may refuse it with a message', async () => {
  const path = join(global, 'guard.py')
  write(
    path,
    extension(
      'guard',
      `seen = []\n\ndef check(args):\n    if "secret" in str(args[0]):\n        return "secret files are off limits"\n\ndef audit(args, result):\n    if result == "forbidden":\n        raise vis.Refuse("that result is withheld")\n`,
      ', op_hooks=[vis.before("write_note", check), vis.after("write_note", audit)]',
    ),
  )
  try {
    const r = await registry()
    let runs = 0
    const host: Tool = {
      name: 'write_note',
      doc: 'Writes a note.',
      signature: '(path)',
      run: async (args) => {
        runs++
        return args[0] === 'bad.txt' ? 'forbidden' : `wrote ${args[0]}`
      },
    }
    const wrapped = r.withHooks(host)
    assert.equal(await wrapped.run(['a.txt'], ctx('h')), 'wrote a.txt')
    await assert.rejects(wrapped.run(['secret.txt'], ctx('h')), (e: any) => {
      assert.equal(e.code, 'ext.refused')
      assert.match(e.message, /write_note was refused by extension guard: secret files are off limits/)
      return true
    })
    assert.equal(runs, 1, 'a refused call never reaches the host tool')
    await assert.rejects(wrapped.run(['bad.txt'], ctx('h')), /that result is withheld/)
  } finally {
    remove(path)
  }
})

test('state is durable per extension and survives a restart', async () => {
  const path = join(global, 'counter.py')
  write(
    path,
    extension(
      'counter',
      'def bump():\n    """Counts."""\n    n = vis.state.get("n", 0) + 1\n    vis.state.set("n", n)\n    return [n, sorted(vis.state.keys())]\n',
      ', tools=[bump]',
    ),
  )
  try {
    let store = openStore({ home })
    let r = await registry({ store })
    assert.deepEqual(await tool(r, 'counter_bump').run([], ctx('k')), [1, ['n']])
    assert.deepEqual(await tool(r, 'counter_bump').run([], ctx('k')), [2, ['n']])
    await r.close()
    store.close()
    store = openStore({ home })
    r = await registry({ store })
    assert.deepEqual(await tool(r, 'counter_bump').run([], ctx('k2')), [3, ['n']])
    assert.equal(store.kv.get('counter', 'n'), 3)
    await r.close()
    store.close()
  } finally {
    remove(path)
  }
})

test('calls into one extension are serialised per session', async () => {
  const path = join(global, 'slow.py')
  const log = join(base, 'slow.log')
  write(
    path,
    extension(
      'slow',
      `import time\n\ndef step(tag):\n    """Logs entry and exit."""\n    with open(${JSON.stringify(log)}, "a") as f:\n        f.write("in " + tag + "\\n")\n    time.sleep(0.05)\n    with open(${JSON.stringify(log)}, "a") as f:\n        f.write("out " + tag + "\\n")\n    return tag\n`,
      ', tools=[step]',
    ),
  )
  try {
    const r = await registry()
    const step = tool(r, 'slow_step')
    const got = await Promise.all(['a', 'b', 'c'].map((t) => step.run([t], ctx('ser'))))
    assert.deepEqual(got, ['a', 'b', 'c'])
    const { readFileSync } = await import('node:fs')
    assert.equal(readFileSync(log, 'utf8'), 'in a\nout a\nin b\nout b\nin c\nout c\n')
  } finally {
    remove(path)
  }
})

test('a file that never finishes importing is reported and the rest still load', async () => {
  const path = join(global, 'spin.py')
  write(path, 'import vis\nwhile True:\n    pass\n')
  try {
    const r = await ExtensionRegistry.open({ home, project, python, loadTimeoutMs: 1500 })
    open.push(r)
    assert.deepEqual(
      r.warnings().map((w) => [w.key, w.reason]),
      [['spin', 'loading did not finish within 1500 ms']],
    )
    assert.equal(await tool(r, 'greeter_greet').run(['zed'], ctx('sp')), 'hello zed!')
  } finally {
    remove(path)
  }
})

test('an aborted tool call is interrupted in the trusted worker; the next call runs', {
  timeout: 60_000,
}, async () => {
  const path = join(global, 'sleepy.py')
  write(
    path,
    extension(
      'sleepy',
      'import time\n\ndef nap(s):\n    """Sleeps."""\n    time.sleep(s)\n    return s\n',
      ', tools=[nap]',
    ),
  )
  try {
    const r = await registry()
    const nap = tool(r, 'sleepy_nap')
    assert.equal(await nap.run([0], ctx('ab')), 0, 'the session worker is up and the extension realised')
    const ac = new AbortController()
    const pending = nap.run([3600], { ...ctx('ab'), signal: ac.signal })
    setTimeout(() => ac.abort(), 300)
    await assert.rejects(pending, /KeyboardInterrupt/)
    assert.equal(await nap.run([0], ctx('ab')), 0)
  } finally {
    remove(path)
  }
})

test("a reload after editing only a package's helper reaches live sessions", async () => {
  const util = join(local, 'packed', 'util.py')
  const r = await registry()
  const value = () => tool(r, 'pk_value').run([], ctx('live'))
  assert.deepEqual(await value(), [42, 42])
  write(util, 'VALUE = 43\n')
  try {
    await r.reload()
    assert.deepEqual(await value(), [43, 43])
  } finally {
    write(util, 'VALUE = 42\n')
  }
})

test('registries of two projects loading at once each import their own helpers', async () => {
  const projects = ['pa', 'pb'].map((p) => join(base, p))
  for (const p of projects) {
    const dir = join(p, '.vis', 'extensions')
    write(
      join(dir, 'mine.py'),
      extension(
        'mine',
        'import sidecar\n\ndef which():\n    """Which."""\n    return sidecar.NAME\n',
        ', tools=[which], description=sidecar.NAME',
      ),
    )
    write(join(dir, 'sidecar', '__init__.py'), `NAME = ${JSON.stringify(p)}\n`)
  }
  const regs = await Promise.all(projects.map((p) => ExtensionRegistry.open({ home, project: p, python })))
  open.push(...regs)
  for (const [i, r] of regs.entries()) {
    assert.deepEqual(r.warnings(), [])
    assert.equal(r.get('mine')?.manifest.description, projects[i], 'registration saw its own helper')
    assert.equal(await tool(r, 'mine_which').run([], ctx(`two-${i}`)), projects[i])
  }
})
