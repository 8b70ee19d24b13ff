// Attack (fourteenth outsider pass; surface: the name rule of src/mcp-client/server-env.ts, isLocationName).
// A variable is judged only when its name carries one of the LOCATION_WORDS or TOOL_PREFIXES. OPENSSL_CONF
// carries neither (`CONF` is not `CONFIG`, `OPENSSL_` is no listed prefix), yet every Node.js process reads
// the file it names at start-up (section `nodejs_conf`), and Python on its first `import ssl` (section
// `openssl_conf`), and an OpenSSL 3 configuration loads providers: `module = <file>.so`, `activate = 1`
// dlopens a shared object into the process. So an npx/node (or Python HTTPS-using) MCP server configured
// with `"OPENSSL_CONF": "<project>/config/openssl.cnf"` (a FIPS or legacy-provider setup kept in the
// project) runs, on the host and unconfined, the code of a shared object the block wrote into the root.
// The same file given through NODE_OPTIONS=--openssl-config=... is refused.
//
// Reproduction: session on W; servers `control` (node, env NODE_OPTIONS=--openssl-config=W/config/openssl.cnf)
// and `conf` (node, env OPENSSL_CONF=W/config/openssl.cnf). The block writes W/config/openssl.cnf and the
// provider W/config/prov.so (built here by the test with the host's cc; its constructor appends to a marker
// outside W) and connects both. Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, connectEach, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-openssl-')

test('OPENSSL_CONF naming a file in a root (a provider module the host dlopens) is refused', () => {
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  const build = join(base, 'build')
  for (const d of [W, home, outside, build]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  // The provider the block plants: only its bytes cross into the block's code.
  writeFileSync(
    join(build, 'prov.c'),
    `#include <stdio.h>\n__attribute__((constructor)) static void ran(void) { FILE *f = fopen(${JSON.stringify(marker)}, "a"); if (f) { fputs("W/config/prov.so, written by the block, loaded by the host's node through OPENSSL_CONF\\n", f); fclose(f); } }\nint OSSL_provider_init(void) { return 0; }\n`,
  )
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-o', join(build, 'prov.so'), join(build, 'prov.c')], {
    encoding: 'utf8',
  })
  assert.equal(cc.status, 0, `building the provider: ${cc.stderr}`)
  const so = readFileSync(join(build, 'prov.so')).toString('base64')
  const cnf = [
    'openssl_conf = init',
    'nodejs_conf = init',
    '[init]',
    'providers = provs',
    '[provs]',
    'notes = notes_sect',
    'default = default_sect',
    '[notes_sect]',
    `module = ${W}/config/prov.so`,
    'activate = 1',
    '[default_sect]',
    'activate = 1',
    '',
  ].join('\n')
  const server = (env: Record<string, string>): Server => ({
    command: process.execPath,
    args: ['-e', 'setTimeout(() => {}, 5000)'],
    env,
    timeout_ms: 10_000,
  })
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server({ NODE_OPTIONS: `--openssl-config=${W}/config/openssl.cnf` }),
      conf: server({ OPENSSL_CONF: `${W}/config/openssl.cnf` }),
    },
    [
      'import os, base64',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/config', exist_ok=True)",
      `open(W + '/config/openssl.cnf', 'w').write(${JSON.stringify(cnf)})`,
      `open(W + '/config/prov.so', 'wb').write(base64.b64decode(${JSON.stringify(so)}))`,
      "print('planted')",
      ...connectEach(['control', 'conf']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `--openssl-config=W/... is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `env OPENSSL_CONF=W/config/openssl.cnf passed the launch check (its name is not "like a location") and ` +
      `the host's node dlopened the block's provider: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 500)})`,
  )
})
