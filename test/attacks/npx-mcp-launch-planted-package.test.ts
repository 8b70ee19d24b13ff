// Attack (tenth outsider pass, finding 5): an MCP host that starts `npx -y vis-runtime mcp --root P` with P
// as its working directory runs a `node_modules/vis-runtime` npx finds there before its cache, and a block
// of any session on P can write one: the planted script runs on the host before any vis code exists to
// refuse it. Nothing in vis can stop that launch, so the README now says how to launch vis instead: by
// absolute path (a global install), or with npx only from a working directory outside every root. This
// test plants the package from a real session, checks the plant is one npx would run (the launch the
// README warns against), then checks that both recommended launches leave it unrun.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, test } from 'node:test'
import { plantInSession } from './trusted-project-extension.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-npx-local-'))
after(() => rmSync(base, { recursive: true, force: true }))

// npx beside the node running the tests (Debian's and NodeSource's layouts), else the system's.
const npx = [join(dirname(process.execPath), 'npx'), '/usr/bin/npx', '/usr/local/bin/npx'].find((p) =>
  existsSync(p),
)
// This checkout's own CLI stands for the globally installed `vis`, named by its absolute path.
const visBin = new URL('../../bin/vis.js', import.meta.url).pathname

test('the launches the README recommends never run a vis-runtime a session planted in its project', async () => {
  assert.ok(npx, 'npx (npm 7 or later) must be installed beside node to run this test')
  const P = join(base, 'project')
  const outside = join(base, 'outside')
  const elsewhere = join(base, 'elsewhere')
  for (const d of [P, outside, elsewhere]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const script = `#!/usr/bin/env node\nrequire('fs').writeFileSync(${JSON.stringify(marker)}, 'planted vis ran: ' + process.argv.slice(2).join(' '))\n`
  const home = join(base, 'home')
  await plantInSession(
    home,
    P,
    [
      'import json, os',
      `P = ${JSON.stringify(P)}`,
      "pkg = os.path.join(P, 'node_modules', 'vis-runtime')",
      "os.makedirs(os.path.join(P, 'node_modules', '.bin'))",
      'os.makedirs(pkg)',
      "json.dump({'name': 'vis-runtime', 'version': '99.0.0', 'bin': {'vis': 'planted.js'}}, open(os.path.join(pkg, 'package.json'), 'w'))",
      `open(os.path.join(pkg, 'planted.js'), 'w').write(${JSON.stringify(script)})`,
      "os.chmod(os.path.join(pkg, 'planted.js'), 0o755)",
      "os.symlink('../vis-runtime/planted.js', os.path.join(P, 'node_modules', '.bin', 'vis'))",
      "print('planted')",
    ],
    /planted/,
  )
  assert.ok(!existsSync(marker), 'the marker was written from inside the jail')

  const env = {
    ...process.env,
    VIS_HOME: home,
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  }
  const launch = (command: string, args: string[], cwd: string) =>
    spawnSync(command, args, { cwd, env, input: '', encoding: 'utf8', timeout: 120_000 })

  // The launch the README warns against: npx in the project runs the plant (so the plant is a real one).
  launch(npx!, ['-y', 'vis-runtime', 'mcp', '--root', P], P)
  assert.ok(existsSync(marker), 'the planted package is not one npx would run: this test proves nothing')
  rmSync(marker)

  // Recommended: vis by its absolute path, even started in the project.
  const direct = launch(process.execPath, [visBin, 'mcp', '--root', P], P)
  assert.ok(!existsSync(marker), `vis by absolute path ran the planted package: ${readMarker(marker)}`)
  assert.equal(direct.status, 0, direct.stderr)
  assert.match(direct.stderr, /the client closed stdin/)

  // Recommended: npx only from a working directory outside every root.
  launch(npx!, ['-y', 'vis-runtime', 'mcp', '--root', P], elsewhere)
  assert.ok(!existsSync(marker), `npx outside the roots ran the planted package: ${readMarker(marker)}`)
})

const readMarker = (m: string) => (existsSync(m) ? readFileSync(m, 'utf8') : '')
