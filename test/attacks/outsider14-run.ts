// Shared runner for the fourteenth outsider pass's mcp.json `env` attacks: writes the spec, runs
// fixtures/outsider14-mcp-host.ts in a child process (its own vis home) and returns the block's output.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

const fixture = join(import.meta.dirname, 'fixtures', 'outsider14-mcp-host.ts')

export type Server = { command: string; args: string[]; env: Record<string, string>; timeout_ms: number }

// The block's lines that try each named server: "<name> ok ..." or "<name> refused <code> <message>".
export function connectEach(names: string[]): string[] {
  return [
    `for name in ${JSON.stringify(names)}:`,
    '    try:',
    '        print(name, "ok", await mcp_connect(name))',
    '    except Exception as e:',
    "        print(name, 'refused', getattr(e, 'code', ''), str(e)[:300])",
  ]
}

export function runEngine(
  base: string,
  W: string,
  home: string,
  outside: string,
  servers: Record<string, Server>,
  code: string[],
): string {
  const spec = join(base, 'spec.json')
  writeFileSync(spec, JSON.stringify({ servers, code: code.join('\n') }))
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, W, home, spec], {
    cwd: outside,
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 240_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  return r.stdout.trim().replace(/\n/g, ' | ')
}
