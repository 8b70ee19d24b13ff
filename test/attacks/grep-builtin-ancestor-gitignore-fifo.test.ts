// ATTACK (SECURITY.md "The layers", host-side file access: "nothing on the host checks a path
// under a root ... and then opens it again by name"; issue 31's FIFO rule for AGENTS.md:
// "A link, FIFO or larger file is never followed, waited on or cut"). On a host without
// ripgrep (the README's runtime prerequisites do not list it; only the checkout's test set
// installs it) `grep` runs the builtin engine, which, "like ripgrep", reads the .gitignore of
// EVERY directory above the searched one up to the repository (src/tools/fs/search.ts
// BuiltinEngine.files: listFiles(..., limit: '/')). Ignore files above the session's roots are
// read with a bare `readFile(path)` (src/tools/fs/gitignore.ts `hostFiles`: "the sandbox cannot
// write them") — following links, with no size cap and blocking on a FIFO. But a directory
// above a root is often another session's root (SECURITY.md "Roots": "a root's parent may be
// another sandbox's to write"). That sandbox makes its root a repository (`.git/`) and plants
// `.gitignore` as a FIFO: the next `grep` of any session below it blocks a libuv thread-pool
// thread of the host for good (four such calls stall every file operation of `vis serve`); as a
// link to /dev/zero it makes the host read gigabytes into memory, and as a link to a host file it
// puts that file's lines into the rules deciding what the victim's grep reports.
//
// Reproduction: session A (root P) runs `os.mkdir('.git'); os.mkfifo('.gitignore')`; the grep
// tool of a session whose root is P/app (builtin engine, as on a host without rg) searches '.':
// it never returns (here: not within 10 s; the test then writes to the FIFO to release it).
// Expected: ignore files above a root opened without following links, O_NONBLOCK, regular files
// only, capped (as the in-root ones are), so the call returns at once.
import assert from 'node:assert/strict'
import { constants as C, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { grepTool } from '../../src/tools/fs/grep.js'
import { PathGuard } from '../../src/tools/fs/paths.js'
import { SessionResources } from '../../src/tools/resources.js'
import { python } from '../sessions/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test("grep (builtin engine) does not block on a FIFO another sandbox planted as an ancestor's .gitignore", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-gi-fifo-home-'))
  const parent = mkdtempSync(join(tmpdir(), 'vis-attack-gi-fifo-root-'))
  made.push(home, parent)
  const app = join(parent, 'app')
  mkdirSync(app)
  writeFileSync(join(app, 'code.py'), 'needle = 1\n')
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    // The other sandbox: a session whose root is the parent of the victim's root.
    const other = await engine.createSession({ roots: [parent] })
    const planted = await engine.runBlock(other.id, {
      code: `import os\nos.mkdir('.git')\nos.mkfifo('.gitignore')\nprint('planted')`,
    })
    assert.equal(planted.block.error, null, JSON.stringify(planted.block))
  } finally {
    await engine.close()
  }

  // The victim session's grep tool as a host without ripgrep runs it.
  const grep = grepTool(new PathGuard([app], 'victim'), 'builtin')
  const call = grep.run(['needle'], {
    sessionId: 'victim',
    roots: [app],
    signal: new AbortController().signal,
    resources: new SessionResources(),
  })
  call.catch(() => undefined)
  let settled = false
  void call.finally(() => {
    settled = true
  })
  const deadline = Date.now() + 10_000
  while (!settled && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  const hung = !settled
  if (hung) {
    // Release the thread-pool thread stuck in open(): writers come and go until the call ends
    // (each read then sees EOF).
    const until = Date.now() + 20_000
    while (!settled && Date.now() < until) {
      try {
        closeSync(openSync(join(parent, '.gitignore'), C.O_WRONLY | C.O_NONBLOCK))
      } catch {}
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  assert.equal(hung, false, "the host's grep blocked on a FIFO planted above the root by another session")
})
