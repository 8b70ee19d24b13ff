// `vis doctor` reports extension files that fail to load, beside the confinement layers.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { extension, tempLayout, write } from './helpers.js'

const { base, home, project, global, local } = tempLayout('ext-doctor')
const vis = join(import.meta.dirname, '..', 'http', 'fixtures', 'vis.ts')
after(() => rmSync(base, { recursive: true, force: true }))

test('vis doctor --json lists one warning per extension file that fails to load', () => {
  write(
    join(global, 'fine.py'),
    extension('fine', 'def hi():\n    """Says hi."""\n    return "hi"\n', ', tools=[hi]'),
  )
  write(join(local, 'bad.py'), 'import vis\nimport no_such_module_here\n')
  const r = spawnSync(process.execPath, ['--import', 'tsx', vis, 'doctor', '--json', '--project', project], {
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 120_000,
  })
  const report = JSON.parse(r.stdout) as {
    checks: { id: string; level: string; message: string }[]
    exitCode: number
  }
  const ext = report.checks.filter((c) => c.id.startsWith('extension'))
  assert.equal(ext.length, 1, JSON.stringify(ext))
  assert.equal(ext[0]!.level, 'warn')
  assert.match(ext[0]!.message, /bad\.py: .*no_such_module_here/)
  assert.ok(report.exitCode >= 1)
  assert.equal(r.status, report.exitCode)
})
