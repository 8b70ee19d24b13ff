// Attack (thirteenth outsider pass; surface: the twelfth pass's rule on mcp.json `env`,
// src/mcp-client/server-env.ts pathsIn). A `file://` URL in a value is decoded and judged ("a `file://` one
// names its path"), but only the spelling with `//`: `file:/dir/x.mjs` (one slash, as valid a file URL for
// Node's --import and WHATWG URL) falls through to the splitter, which takes `/dir/x.mjs` as a path WITHOUT
// percent-decoding it. A root whose name holds a space is spelled `%20` in a file URL (what pathToFileURL and
// every URL tool print), so NODE_OPTIONS=--import=file:/tmp/.../my%20work/hook.mjs is judged as a folder
// "my%20work" that no root holds, and Node imports /tmp/.../my work/hook.mjs, which the block wrote. The same
// URL with `file://` is refused.
//
// Reproduction: a session on S ("my work"); servers `control` (node, NODE_OPTIONS=--import=file://<S
// encoded>/hook.mjs) and `oneslash` (NODE_OPTIONS=--import=file:<S encoded>/hook.mjs). The block writes
// S/hook.mjs (appending to a marker outside S) and connects both. Expected: both refused with
// mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-fileurl-'))
after(() => rmSync(base, { recursive: true, force: true }))
const fixture = join(import.meta.dirname, 'fixtures', 'mcp-env-file-url-host.ts')

test('a one-slash, percent-encoded file: URL into a root in mcp.json env is refused like file://', () => {
  const S = join(base, 'my work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [S, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, S, home, marker], {
    cwd: outside,
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 240_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /control: mcp\.launch-denied/, `the file:// spelling is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `NODE_OPTIONS=--import=file:<root, %20-encoded>/hook.mjs passed the launch check and the host's node ` +
      `imported the block's module: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 400)})`,
  )
})
