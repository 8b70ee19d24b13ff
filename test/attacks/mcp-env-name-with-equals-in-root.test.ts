// Attack (sixteenth outsider pass; surface: checkServerEnv in src/mcp-client/server-env.ts).
// mcp.json's `env` is a JSON object whose keys are taken as variable names as they are (config.ts:
// z.record(z.string())), and Node builds each environment entry as `${key}=${value}`, checking only for NUL.
// An environment entry's name ends at its FIRST `=`, so the key `PERL5LIB=<W>/lib:` with the value `x` is,
// to the server, PERL5LIB="<W>/lib:=x": perl puts <W>/lib in @INC. The check judges the value `x` (no place
// in a root) under a name it never splits, so the start passes. The same folder given as the value is
// refused. (mcp.json is the person's file, so this needs a key no one would write by hand; it matters where
// mcp.json is generated or merged from other tools' configuration.)
//
// Reproduction: session on W; servers `control` (env PERL5LIB=W/lib) and `key` (env {"PERL5LIB=W/lib:": "x"}),
// each `/usr/bin/perl -MPlanted -e sleep(3)`. The block writes W/lib/Planted.pm (appends to a marker
// outside W) and connects both.
// Expected: both refused with mcp.launch-denied (or the key refused as no variable name); the marker never written.
// The fix refuses the key where the servers are read (src/mcp-client/config.ts: an env key is a portable
// name), a config error before any server starts, so the block that would connect `key` never runs: the
// test checks that refusal both ways the engine reads servers (mcp.json, and servers given in code) and
// runs the block with `control` alone. (Fixer fx16d: the attack's own form expected the refusal at
// mcp_connect, which a config error cannot give.)
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadMcpConfig } from '../../src/engine/mcp-config.js'
import { VisError } from '../../src/util/errors.js'
import { attackBase, attackFolders, connectEach, landed, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-env-name-equals-')

test('an mcp.json env key holding "=" (NAME=<root path>) is refused', () => {
  assert.ok(existsSync('/usr/bin/perl'), 'this test needs perl')
  const { W, home, outside, marker } = attackFolders(base)
  const server = (env: Record<string, string>): Server => ({
    command: '/usr/bin/perl',
    args: ['-MPlanted', '-e', 'sleep(3)'],
    env,
    timeout_ms: 6_000,
  })
  const module =
    `open(my $f, '>>', ${JSON.stringify(marker)}); ` +
    `print $f "W/lib/Planted.pm, written by the block, loaded on the host by perl\\n"; close($f); 1;\n`
  const servers = { control: server({ PERL5LIB: `${W}/lib` }), key: server({ [`PERL5LIB=${W}/lib:`]: 'x' }) }
  // mcp.json holding the key: the whole file is refused, naming the key.
  const fileHome = join(base, 'vis-home-file')
  mkdirSync(fileHome)
  writeFileSync(join(fileHome, 'mcp.json'), JSON.stringify({ servers }))
  assert.throws(
    () => loadMcpConfig(fileHome),
    (err: unknown) =>
      err instanceof VisError &&
      err.code === 'mcp.config' &&
      err.message.includes(`servers.key.env.PERL5LIB=${W}/lib:: an env name is letters, digits and "_"`),
    'an mcp.json env key holding "=" is refused when the file is read',
  )
  // The same servers given to the engine in code: the session's servers are refused, none started.
  const spec = join(base, 'spec-key.json')
  const code = ['import os', "os.makedirs(W + '/lib', exist_ok=True)", ...connectEach(['control', 'key'])]
  writeFileSync(spec, JSON.stringify({ servers, code: [`W = ${JSON.stringify(W)}`, ...code].join('\n') }))
  const fixture = join(import.meta.dirname, 'fixtures', 'outsider14-mcp-host.ts')
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, W, home, spec], {
    cwd: outside,
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 240_000,
  })
  assert.notEqual(r.status, 0, `${r.stdout}\n${r.stderr}`)
  assert.match(r.stderr, /mcp\.config|MCP servers: /, r.stderr)
  assert.ok(r.stderr.includes(`key.env.PERL5LIB=${W}/lib:: an env name`), r.stderr)
  const out = runEngine(base, W, home, outside, { control: servers.control }, [
    'import os',
    `W = ${JSON.stringify(W)}`,
    "os.makedirs(W + '/lib', exist_ok=True)",
    `open(W + '/lib/Planted.pm', 'w').write(${JSON.stringify(module)})`,
    "print('planted')",
    ...connectEach(['control']),
  ])
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `env PERL5LIB=W/lib is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    'env key "PERL5LIB=<W>/lib:" (value "x") passed the launch check (the value was judged, the name never ' +
      "split at its '=') and the host's perl loaded the block's module: " +
      `${landed(marker)} (${out.slice(0, 500)})`,
  )
})
