// Attack (thirteenth outsider pass; surface: the twelfth pass's rule on mcp.json `env`,
// src/mcp-client/server-env.ts pathsIn). A value is split where lists and options part, and every part
// that starts with `-` is dropped as an option name: `--require=x` and `-r x` yield x, but an option whose
// path is ATTACHED to it (`-IW/lib`, the way perl's PERL5OPT, ruby's RUBYOPT and C-style flags take a
// folder) is one part starting with `-`, dropped whole. So PERL5LIB=W/lib is refused while
// PERL5OPT="-IW/lib -MNotes" (the same folder, and a module loaded from it at start) passes, and the host's
// perl loads the block's W/lib/Notes.pm, unconfined.
//
// Reproduction: session on W; servers `control` (perl, env PERL5LIB=W/lib) and `attached` (perl, env
// PERL5OPT="-IW/lib -MNotes"). The block writes W/lib/Notes.pm (appending to a marker outside W) and connects
// both. Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-attached-'))
after(() => rmSync(base, { recursive: true, force: true }))
const fixture = join(import.meta.dirname, 'fixtures', 'mcp-env-attached-option-host.ts')

test('a root folder attached to an option (PERL5OPT=-IW/lib) in mcp.json env is refused like PERL5LIB', () => {
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, W, home, marker], {
    cwd: outside,
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 240_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /control: mcp\.launch-denied/, `PERL5LIB=W/lib is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `env PERL5OPT="-IW/lib -MNotes" passed the launch check (an option part is dropped whole) and the host's ` +
      `perl loaded the block's module: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 400)})`,
  )
})
