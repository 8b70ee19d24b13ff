// Attack (seventeenth outsider pass; surface: the vis home's extensions, src/extensions/masks.ts and
// discover.ts). "Code written into an extension directory runs unconfined at the next reload, so a
// sandbox must never reach one": an extension DIRECTORY inside a root is masked in every jail, and one
// reached through a link in a root is refused. But the files IN the home's extension directory are
// never asked where they lead. A person who develops an extension in a project and links the file into
// ~/.vis/extensions (`ln -s ~/proj/notes_ext.py ~/.vis/extensions/`, the usual way to try a module while
// editing it) gives every session on ~/proj the extension's source: the block rewrites it, and the next
// engine start (any `vis run`, `vis serve`, `vis chat`) imports it in the trusted worker, unconfined.
//
// Reproduction: a vis home whose extensions/notes_ext.py is a link to W/notes_ext.py (a valid extension);
// engine 1 with a session on W, whose block rewrites W/notes_ext.py (appending to a marker outside W at
// import); engine 1 closed, engine 2 started on the same home with a session on another folder.
// Expected: the block's source is never imported on the host (the link refused or not loaded, or the
// root refused); the marker never written. A second test: the package form, a folder link.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { closeRegistrationWorkers } from '../../src/extensions/registration.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-global-ext-link-'))
after(async () => {
  await closeRegistrationWorkers()
  rmSync(base, { recursive: true, force: true })
})

test("a file link in the home's extensions folder into a root does not run the block's code on the host", async () => {
  const W = join(base, 'proj')
  const other = join(base, 'other')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [W, other, join(home, 'extensions'), outside]) mkdirSync(d, { recursive: true })
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(
    join(W, 'notes_ext.py'),
    'import vis\n\ndef hi():\n    """Says hi."""\n    return 1\n\nvis.register(vis.Extension(name="notes", tools=[hi]))\n',
  )
  // The person's development link: the extension's source stays in the project.
  symlinkSync(join(W, 'notes_ext.py'), join(home, 'extensions', 'notes_ext.py'))
  const planted =
    `open(${JSON.stringify(marker)}, 'a').write('W/notes_ext.py, written by the block, imported on the host as a vis extension\\n')\n` +
    'import vis\n\ndef hi():\n    """Says hi."""\n    return 1\n\nvis.register(vis.Extension(name="notes", tools=[hi]))\n'
  let written = ''
  const e1 = await createEngine({ home, pool: { size: 0 } })
  try {
    const s = await e1.createSession({ roots: [W] })
    const r = await e1.runBlock(s.id, {
      code: `open(${JSON.stringify(join(W, 'notes_ext.py'))}, 'w').write(${JSON.stringify(planted)})\nprint('planted')`,
      timeout_ms: 60_000,
    })
    written = `${r.block.stdout ?? ''} ${JSON.stringify(r.block.error ?? null)}`
  } catch (e) {
    written = `refused: ${String(e)}`
  } finally {
    await e1.close()
  }
  let second = ''
  const e2 = await createEngine({ home, pool: { size: 0 } })
  try {
    const s = await e2.createSession({ roots: [other] })
    const r = await e2.runBlock(s.id, { code: "print('second')", timeout_ms: 60_000 })
    second = `${r.block.stdout ?? ''} ${JSON.stringify(r.block.error ?? null)}`
  } finally {
    await e2.close()
  }
  assert.ok(
    !existsSync(marker),
    "the home's extensions/notes_ext.py links into the session root, the block rewrote it, and the next " +
      `engine imported it on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} ` +
      `(first engine: ${written.trim().slice(0, 300)}; second: ${second.trim().slice(0, 200)})`,
  )
})

// The package form: a folder with extension.py, linked whole (scan follows the link).
test("a package link (<home>/extensions/notes -> W/notes) into a root does not run the block's code on the host", async () => {
  const W = join(base, 'proj2')
  const other = join(base, 'other2')
  const home = join(base, 'vis-home2')
  const outside = join(base, 'outside2')
  for (const d of [W, join(W, 'notes'), other, join(home, 'extensions'), outside])
    mkdirSync(d, { recursive: true })
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(
    join(W, 'notes', 'extension.py'),
    'import vis\n\ndef hi():\n    """Says hi."""\n    return 1\n\nvis.register(vis.Extension(name="notes", tools=[hi]))\n',
  )
  // The person's development link: the extension's source stays in the project.
  symlinkSync(join(W, 'notes'), join(home, 'extensions', 'notes'))
  const planted =
    `open(${JSON.stringify(marker)}, 'a').write('W/notes/extension.py, written by the block, imported on the host as a vis extension\\n')\n` +
    'import vis\n\ndef hi():\n    """Says hi."""\n    return 1\n\nvis.register(vis.Extension(name="notes", tools=[hi]))\n'
  let written = ''
  const e1 = await createEngine({ home, pool: { size: 0 } })
  try {
    const s = await e1.createSession({ roots: [W] })
    const r = await e1.runBlock(s.id, {
      code: `open(${JSON.stringify(join(W, 'notes', 'extension.py'))}, 'w').write(${JSON.stringify(planted)})\nprint('planted')`,
      timeout_ms: 60_000,
    })
    written = `${r.block.stdout ?? ''} ${JSON.stringify(r.block.error ?? null)}`
  } catch (e) {
    written = `refused: ${String(e)}`
  } finally {
    await e1.close()
  }
  let second = ''
  const e2 = await createEngine({ home, pool: { size: 0 } })
  try {
    const s = await e2.createSession({ roots: [other] })
    const r = await e2.runBlock(s.id, { code: "print('second')", timeout_ms: 60_000 })
    second = `${r.block.stdout ?? ''} ${JSON.stringify(r.block.error ?? null)}`
  } finally {
    await e2.close()
  }
  assert.ok(
    !existsSync(marker),
    "the home's extensions/notes (a package) links into the session root, the block rewrote it, and the next " +
      `engine imported it on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} ` +
      `(first engine: ${written.trim().slice(0, 300)}; second: ${second.trim().slice(0, 200)})`,
  )
})
