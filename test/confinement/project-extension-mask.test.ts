// Every jail masks `<root>/.vis/extensions` where it exists, whatever the engine's project: a
// session of an engine with no project (a library's, or `vis serve` started elsewhere) cannot
// read or add to another project's extensions. The rest of the root, and of .vis, stays as it was.
import assert from 'node:assert/strict'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

// An engine with no project over a fresh home, and a session on a fresh root `lay` fills first.
// Returns the root, once the engine is closed.
async function onRoot(
  lay: (root: string) => void,
  use: (engine: Engine, sessionId: string) => Promise<void>,
): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'vis-projmask-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-projmask-root-'))
  made.push(home, root)
  process.env.VIS_HOME = home
  lay(root)
  const engine = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await engine.createSession({ roots: [root] })
    await use(engine, s.id)
  } finally {
    await engine.close()
  }
  return root
}

test("a session's jail masks an existing .vis/extensions in its root; the rest stays writable", async () => {
  const lay = (root: string) => {
    mkdirSync(join(root, '.vis', 'extensions'), { recursive: true })
    mkdirSync(join(root, '.vis', 'prompts'), { recursive: true })
    writeFileSync(join(root, '.vis', 'extensions', 'mine.py'), 'SECRET = 1\n')
  }
  const root = await onRoot(lay, async (engine, sid) => {
    const r = await engine.runBlock(sid, {
      code: [
        'import os',
        "print(os.listdir('.vis/extensions'))",
        'try:',
        "    open('.vis/extensions/planted.py', 'w').write('import os')",
        "    print('planted')",
        'except OSError as e:',
        "    print('refused', e.errno)",
        "open('.vis/prompts/fix.md', 'w').write('Fix it.')",
        "open('notes.txt', 'w').write('ok')",
        "print('rest writable')",
      ].join('\n'),
    })
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    assert.match(r.block.stdout ?? '', /^\[\]\nrefused 30\nrest writable\n$/)
    // The host file tools hide it as the jail does; the rest of .vis reads as before.
    const tools = await engine.runBlock(sid, {
      code: [
        'try:',
        "    await cat('.vis/extensions/mine.py')",
        "    print('read')",
        'except Exception as e:',
        "    print('denied' if 'extension directory' in str(e) else e)",
        "print((await cat('.vis/prompts/fix.md'))['content'].strip())",
      ].join('\n'),
    })
    assert.equal(tools.block.error, null, JSON.stringify(tools.block.error))
    assert.match(tools.block.stdout ?? '', /^denied\n.*Fix it\.\n$/s)
    // A blank draft's empty lower layer still gets the mask's mount point.
    await engine.draft(sid).blank('empty')
    const d = await engine.runBlock(sid, { code: "import os\nprint(sorted(os.listdir('.')))" })
    assert.equal(d.block.error, null, JSON.stringify(d.block.error))
    assert.match(d.block.stdout ?? '', /\['\.vis'\]/)
    await engine.draft(sid).abandon('test')
  })
  assert.equal(existsSync(join(root, '.vis', 'extensions', 'planted.py')), false)
  assert.equal(readFileSync(join(root, '.vis', 'extensions', 'mine.py'), 'utf8'), 'SECRET = 1\n')
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'ok')
  assert.equal(readFileSync(join(root, '.vis', 'prompts', 'fix.md'), 'utf8'), 'Fix it.')
})

test('a linked .vis/extensions cannot be replaced: the .vis folder holding the link is masked', async () => {
  const lay = (root: string) => {
    mkdirSync(join(root, 'tools', 'vis-ext'), { recursive: true })
    mkdirSync(join(root, '.vis'))
    symlinkSync('../tools/vis-ext', join(root, '.vis', 'extensions'))
  }
  const root = await onRoot(lay, async (engine, sid) => {
    const r = await engine.runBlock(sid, {
      code: [
        'import os',
        'try:',
        "    os.unlink('.vis/extensions')",
        "    os.makedirs('.vis/extensions')",
        "    print('replaced')",
        'except OSError as e:',
        "    print('refused', e.errno)",
        "open('notes.txt', 'w').write('ok')",
        "print('rest writable')",
      ].join('\n'),
    })
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    assert.match(r.block.stdout ?? '', /^refused \d+\nrest writable\n$/)
  })
  assert.equal(readlinkSync(join(root, '.vis', 'extensions')), '../tools/vis-ext')
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'ok')
})
