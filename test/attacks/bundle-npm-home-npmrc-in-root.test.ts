// Attack (thirteenth outsider pass; surface 4/6: what a host step READS AS CONFIGURATION from a place a
// sandbox writes). The eleventh pass gave MCP servers a private HOME when the host's HOME lies in a session
// root ("npx, uvx and pip read their user configuration from HOME first"), but vis's OWN npm run keeps the
// host's HOME: `vis bundle` runs `npm pack` in the package (src/bundle/npm.ts: env {...process.env, PATH};
// no --ignore-scripts, so the package's prepack script runs). With a session on the person's home (the
// README's "workspace at $HOME", allowed), a block writes ~/.npmrc (`script-shell=~/sh.sh`, or
// `node-options=--require ...`) and ~/sh.sh; `vis bundle` then runs the prepack script through the block's
// shell, on the host, unconfined.
//
// Reproduction: a runtime with a session on H; the block writes H/.npmrc (script-shell=H/sh.sh) and H/sh.sh
// (appending to a marker outside H); a process with HOME=H runs packPackage(pkg, out), as `vis bundle` does,
// for an installed vis-runtime outside H. Expected: the block's shell never runs (npm reads no user
// configuration from a HOME inside a live root, or the bundle is refused); the marker is never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { installedPackage, needsBuiltPackage } from './installed-package.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-bundle-npmrc-'))
const cleanups: (() => Promise<void>)[] = []
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {})
  rmSync(base, { recursive: true, force: true })
})
const fixture = join(import.meta.dirname, 'fixtures', 'bundle-pack-host.ts')

test("vis bundle's npm does not read a ~/.npmrc a block wrote in a HOME that is a live root", async () => {
  needsBuiltPackage()
  const inst = installedPackage('bundle-npmrc', 'npm')
  const H = join(base, 'home')
  const home = join(base, 'vis-home')
  const out = join(base, 'out')
  for (const d of [H, home, out]) mkdirSync(d)
  const rt = await createRuntime({ home, pool: { size: 0 } })
  cleanups.push(() => rt.close())
  const s = await rt.createSession({ roots: [H] })
  cleanups.push(() => s.dispose())
  const sh = `#!/bin/sh\necho "H/sh.sh, planted by the block, run by vis bundle's npm as its script-shell: $*" >> ${JSON.stringify(inst.marker)}\nexit 1\n`
  const planted = await s.runBlock(
    [
      'import os',
      `H = ${JSON.stringify(H)}`,
      "open(H + '/.npmrc', 'w').write('script-shell=' + H + '/sh.sh\\n')",
      `open(H + '/sh.sh', 'w').write(${JSON.stringify(sh)})`,
      "os.chmod(H + '/sh.sh', 0o755)",
      "print('planted')",
    ].join('\n'),
    { timeoutMs: 60_000 },
  )
  assert.match(planted.stdout ?? '', /planted/, JSON.stringify(planted))
  // As from a person's shell: `npm test` hands its children npm_config_userconfig (the test runner's
  // own ~/.npmrc), which would hide H/.npmrc from the pack and the attack with it.
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: H, VIS_HOME: home }
  for (const k of Object.keys(env)) if (/^npm_config_(userconfig|globalconfig)$/i.test(k)) delete env[k]
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, inst.pkg, out], {
    cwd: base,
    env,
    encoding: 'utf8',
    timeout: 180_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  assert.ok(
    !existsSync(inst.marker),
    `vis bundle's npm pack read the block's H/.npmrc and ran its script-shell on the host: ` +
      `${existsSync(inst.marker) ? readFileSync(inst.marker, 'utf8').trim() : ''} (${r.stdout.trim().slice(0, 300)})`,
  )
})
