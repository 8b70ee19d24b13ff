// ATTACK (issue 32, modes): a session in mode 'review' writes only a draft of its primary root,
// which lands when a person applies it. The attacks: writing, renaming, hard-linking and a temp
// file renamed into another root from Python; the write tool and the shell aimed at another
// root; writing the primary root before its draft exists; and a tool that runs outside the jail
// (an MCP server's) called with nobody to approve it. Each is refused for its reason (the audit
// hook's "the session is in review", tool.session-read-only, EROFS in the shell's jail,
// tool.approval-unavailable); the draft takes the primary root's writes while the real
// directory stays as it was. A workspace session given the same calls (the control) writes the
// other root and runs the MCP tool, so each assertion can fail.
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { python, stdioFixture } from '../mcp/helpers.js'

let engine: Engine
const made: string[] = []
const dir = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), `vis-attack-review-${p}-`))
  made.push(d)
  return d
}

before(async () => {
  engine = await createEngine({
    home: dir('home'),
    python,
    pool: { size: 0 },
    extensions: false,
    mcpServers: {
      fx: {
        command: process.execPath,
        // By absolute paths, from the server's default folder: a cwd in the checkout is refused while
        // any session (of any test running beside this one) has a root holding it.
        args: ['--import', import.meta.resolve('tsx'), stdioFixture, 'fx'],
        connect_timeout_ms: 60_000,
      },
    },
  })
})
after(async () => {
  await engine?.close()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

async function block(id: string, code: string) {
  const { block: b } = await engine.runBlock(id, { code, timeout_ms: 120_000 })
  assert.equal(b.error, null, JSON.stringify(b.error))
  return JSON.parse(b.stdout.trim().split('\n').pop()!) as Record<string, string>
}

// Every write aimed at `other` (another root), each reported as its outcome.
const OTHER_ROOT_ATTACKS = (other: string) => `import json, os, tempfile
O = ${JSON.stringify(other)}
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = 'done'
    except OSError as e:
        out[name] = f'{type(e).__name__} errno={e.errno} {e}'
def temp_and_rename():
    fd, tmp = tempfile.mkstemp(dir=O)
    os.close(fd)
    os.replace(tmp, O + '/keep.txt')
attempt('open-write', lambda: open(O + '/keep.txt', 'w').write('changed'))
attempt('create', lambda: open(O + '/new.txt', 'x').write('new'))
attempt('rename', lambda: os.rename(O + '/keep.txt', O + '/moved.txt'))
attempt('hard-link', lambda: os.link(O + '/keep.txt', O + '/linked.txt'))
attempt('unlink', lambda: os.unlink(O + '/keep.txt'))
attempt('temp-and-rename', temp_and_rename)
out['read'] = open(O + '/keep.txt').read()
async def tool(name, coro):
    try:
        r = await coro
        out[name] = json.dumps(r) if isinstance(r, dict) and 'exit' in r else 'done'
    except Exception as e:
        out[name] = f"{getattr(e, 'code', None)} {e}"
await tool('write-tool', write(O + '/tool.txt', 'x'))
await tool('shell-touch', shell('touch ' + O + '/shell.txt'))
await tool('mcp', mcp_fx_add(a=1, b=2))
print(json.dumps(out))`

const PY = ['open-write', 'create', 'rename', 'hard-link', 'unlink', 'temp-and-rename']

test('a review session: other roots are read-only, the primary root writes only its draft, MCP tools need approval', async () => {
  // A session keeps its roots sorted: the primary root (the workspace) is the first by name.
  const primary = dir('a-primary')
  const other = dir('b-other')
  writeFileSync(join(primary, 'notes.txt'), 'original\n')
  writeFileSync(join(other, 'keep.txt'), 'kept\n')
  const id = (await engine.createSession({ roots: [primary, other], mode: 'review', shell: true })).id

  // Before its draft exists nothing is writable, the primary root included.
  const early = await block(
    id,
    `import json\ntry:\n    open(${JSON.stringify(join(primary, 'notes.txt'))}, 'w').write('x')\n    r = 'done'\nexcept PermissionError as e:\n    r = str(e)\nprint(json.dumps({'r': r}))`,
  )
  assert.match(early.r!, /the session is in review/)

  await engine.draft(id).create('review')
  const out = await block(
    id,
    `${OTHER_ROOT_ATTACKS(other)}
open(${JSON.stringify(join(primary, 'notes.txt'))}, 'w').write('drafted\\n')`,
  )
  for (const name of PY) {
    assert.match(out[name]!, /^PermissionError .*the session is in review/, `${name}: ${out[name]}`)
  }
  assert.equal(out.read, 'kept\n')
  assert.match(out['write-tool']!, /^tool\.session-read-only .*in review/)
  const touched = JSON.parse(out['shell-touch']!)
  assert.notEqual(touched.exit, 0)
  assert.match(touched.stderr + touched.stdout, /Read-only file system/)
  assert.match(out.mcp!, /^tool\.approval-unavailable /)
  // The draft holds the primary root's write; the real directories are untouched.
  const diff = await engine.draft(id).changes()
  assert.match(diff.diff, /-original\n\+drafted/)
  assert.equal(readFileSync(join(primary, 'notes.txt'), 'utf8'), 'original\n')
  assert.deepEqual(readdirSync(other), ['keep.txt'])
  assert.equal(readFileSync(join(other, 'keep.txt'), 'utf8'), 'kept\n')
  // Applying is the one way a write lands.
  await engine.draft(id).apply({})
  assert.equal(readFileSync(join(primary, 'notes.txt'), 'utf8'), 'drafted\n')
  await engine.closeSession(id)
})

test('the same calls in a workspace session write the other root and run the MCP tool (the control)', async () => {
  const primary = dir('a-primary')
  const other = dir('b-other')
  writeFileSync(join(other, 'keep.txt'), 'kept\n')
  const id = (await engine.createSession({ roots: [primary, other], shell: true })).id
  const out = await block(id, OTHER_ROOT_ATTACKS(other))
  assert.equal(out['open-write'], 'done')
  assert.equal(out.create, 'done')
  assert.equal(out['write-tool'], 'done')
  assert.equal(JSON.parse(out['shell-touch']!).exit, 0)
  assert.doesNotMatch(out.mcp!, /approval/)
  assert.equal(readFileSync(join(other, 'new.txt'), 'utf8'), 'new')
  await engine.closeSession(id)
})
