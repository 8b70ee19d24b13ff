// Attack (seventh outsider pass; SECURITY.md in scope: guest code reaching outside its roots, the host
// running what a sandbox wrote): the host starts several programs BY NAME through its own PATH, outside
// every jail: `git config --global --get user.name` (src/tools/git/jail-config.ts, at each session's
// first tool jail), `du` (src/sessions/disk-usage.ts), `rm -rf` (draft abandon), and bubblewrap itself
// (src/confinement/probe.ts findExecutable('bwrap'), the program that builds every jail). A PATH that
// holds a directory inside a root is the ordinary case for the people vis is for: an activated Python
// virtualenv in the project (`source .venv/bin/activate`, then `vis run` there: PATH starts with
// <project>/.venv/bin), or `npx vis ...`/an npm script in the project (npm puts
// <project>/node_modules/.bin first).
//
// So a block writes <root>/.venv/bin/git (a script, chmod 755: the roots are noexec only inside the
// jail) and the host runs it as the user at the next tool jail; a planted `bwrap` takes over every jail
// of the next vis process. A complete escape.
//
// Reproduction: the test process's PATH starts with <root>/.venv/bin (an activated venv); a real engine
// session (shell on) writes .venv/bin/git from Python (the script writes a marker outside every root,
// then runs the real git), then calls shell() for the first time. It fails on the current code because
// the host runs the planted git (a fix: run host programs by absolute path resolved at start-up from a
// PATH with every root-reachable directory removed, or from fixed system directories only).
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

const made: string[] = []
const savedPath = process.env.PATH
after(() => {
  process.env.PATH = savedPath
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test('a program a block plants in a PATH directory inside its root is not run by the host', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-path-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-path-root-'))
  const outside = mkdtempSync(join(tmpdir(), 'vis-attack-path-outside-'))
  made.push(home, root, outside)
  // The person's activated virtualenv in the project.
  mkdirSync(join(root, '.venv', 'bin'), { recursive: true })
  process.env.PATH = `${join(root, '.venv', 'bin')}:${savedPath}`
  process.env.VIS_HOME = home
  const marker = join(outside, 'ran-on-the-host')
  const script = `#!/bin/sh\necho "$0 $*" >> ${marker}\nexec /usr/bin/git "$@"\n`
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [root], shell: true })
    const r = await engine.runBlock(s.id, {
      code: [
        'import os',
        `open('.venv/bin/git', 'w').write(${JSON.stringify(script)})`,
        "os.chmod('.venv/bin/git', 0o755)",
        "r = await shell('echo tool jail up')",
        "print(r['stdout'].strip())",
      ].join('\n'),
      timeout_ms: 60_000,
    })
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    assert.match(r.block.stdout ?? '', /tool jail up/)
  } finally {
    await engine.close()
  }
  assert.ok(
    !existsSync(marker),
    `the host ran ${join(root, '.venv', 'bin', 'git')}, a file a block wrote, outside every jail (PATH lookup of 'git'): ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''}`,
  )
})
