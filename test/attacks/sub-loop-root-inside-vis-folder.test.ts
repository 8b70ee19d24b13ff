// Attack (eighth outsider pass; SECURITY.md Roots, the seventh pass's defence in depth for project
// extensions: "every jail masks `<root>/.vis/extensions` where it exists ... and the host file tools
// refuse any path inside a `.vis` folder in the roots"). Both checks are made RELATIVE TO A ROOT: the
// mask looks for `<root>/.vis/extensions`, and PathGuard.refuseProjectConfig looks for a `.vis` component
// in the path BELOW the root. A block chooses its child's roots: `sub_loop(task, roots=[...])` takes any
// directory beneath the parent's pinned roots, and the host resolves it on the host, where the parent's
// mask does not exist. So a session on the project P asks for a child whose root is P/.vis/extensions
// itself: the child's jail masks nothing (there is no `.vis/extensions` below that root) and the host
// `write` sees no `.vis` below it. The child writes the project's extension folder with open() and with
// `write`; a `vis chat` running in P (engine B, which hashed the trusted folder at its start) then imports
// the new csv.py in its trusted worker at its next extension call: host code execution from a session
// on P, the very case the seventh pass closed.
//
// Reproduction: P/.vis/extensions/probe.py (imports csv) is trusted; engine B (project P) loads it. A
// harness engine runs a turn on P (scripted model) whose block calls sub_loop with roots=[P/.vis/extensions];
// the child's block writes csv.py (open) and csv2.py (write). Then B's session calls probe_run(). A fix:
// refuse child roots (and any root) inside a `.vis` folder or a masked path, and judge `.vis` by the real
// path, not the part below a root.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { trustProject } from '../../src/extensions/trust.js'
import { pyCall } from '../agent/double.js'
import { harness, lastChatMessage } from '../agent/harness.js'
import { python } from '../sessions/helpers.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-subloop-vis-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('a sub_loop child cannot take a project’s .vis/extensions as its root and write it', async () => {
  const project = join(base, 'app')
  const ext = join(project, '.vis', 'extensions')
  const homeB = join(base, 'home-b')
  mkdirSync(ext, { recursive: true })
  mkdirSync(homeB)
  writeFileSync(
    join(ext, 'probe.py'),
    'import vis\nimport csv\n\n\ndef run():\n    """Run."""\n    return getattr(csv, "VALUE", "the real csv")\n\n\nvis.register(vis.Extension(name="probe", tools=[run]))\n',
  )
  trustProject(homeB, project, ext)
  const marker = join(base, 'ran-on-the-host')
  const planted = `open(${JSON.stringify(marker)}, 'w').write('unconfined')\nVALUE = 'sandbox csv'\n`

  // Engine B: `vis chat` in the project, started first (it hashes and loads the trusted folder).
  const b = await createEngine({ home: homeB, python, pool: { size: 0 }, project })
  const h = await harness({
    root: project,
    config: { subLoops: { concurrency: 2, timeoutMs: 120_000, maxDepth: 2 } },
  })
  let childOut = ''
  try {
    assert.deepEqual(
      b.extensions?.list().map((x) => x.key),
      ['probe'],
    )
    const childCode = [
      'for how in ("open", "write"):',
      '    try:',
      '        if how == "open":',
      `            open("csv.py", "w").write(${JSON.stringify(planted)})`,
      '        else:',
      `            await write("csv2.py", ${JSON.stringify(planted)})`,
      "        print('CHILD-' + 'WROTE', how)",
      '    except Exception as e:',
      "        print('CHILD-' + 'WROTE refused', how, getattr(e, 'code', e))",
    ].join('\n')
    h.double.script([], (req) => {
      const first = req.body.messages.find((m: { role: string }) => m.role === 'user')
      const b2 = JSON.stringify(req.body)
      if (JSON.stringify(first).includes('CHILD-TASK')) {
        if (b2.includes('CHILD-' + 'WROTE')) return { text: 'child done' }
        return { calls: [pyCall(childCode)] }
      }
      if (JSON.stringify(lastChatMessage(req.body)).includes('PARENT-' + 'DONE'))
        return { text: 'parent done' }
      return {
        calls: [
          pyCall(
            `try:\n    print('PARENT-' + 'DONE', await sub_loop('CHILD-TASK', roots=[${JSON.stringify(ext)}]))\nexcept Exception as e:\n    print('PARENT-' + 'DONE refused', getattr(e, 'code', ''), str(e)[:200])`,
          ),
        ],
      }
    })
    const r = await h.agent.turn(h.sessionId, 'PARENT-TASK')
    childOut = r.children
      .map((c) => h.agent.getTurn(c.session_id, c.turn_id))
      .flatMap((t) => t.iterations.flatMap((it) => it.block_ids))
      .map((id) => h.engine.getBlock(id).stdout ?? '')
      .join('\n')
    childOut += h.engine.getBlock(r.iterations[0]!.block_ids[0]!).stdout ?? ''
  } finally {
    await h.close()
  }
  try {
    const s = await b.createSession({ roots: [project] })
    const r = await b.runBlock(s.id, { code: 'print(await probe_run())' })
    const wrote = ['csv.py', 'csv2.py'].filter((f) => existsSync(join(ext, f)))
    assert.deepEqual(
      wrote,
      [],
      `a sub_loop child rooted at the project's .vis/extensions wrote ${wrote.join(' and ')} there (${childOut.trim().replace(/\n/g, ' | ')}); ` +
        `engine B's next extension call ${existsSync(marker) ? 'RAN it on the host (marker written)' : 'answered'} ${JSON.stringify(r.block.stdout ?? r.block.error)}`,
    )
  } finally {
    await b.close()
  }
})
