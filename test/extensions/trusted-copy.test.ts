// A trusted project folder loads from the copy trust made in the vis home, never from the folder:
// the workers' sys.path names the copy, the extension still runs, and what anyone writes in the
// folder afterwards (an edited helper, a new module shadowing the stdlib) reaches no worker,
// running or started later, until a person trusts the folder again.
import assert from 'node:assert/strict'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, sep } from 'node:path'
import { after, test } from 'node:test'
import { closeRegistrationWorkers } from '../../src/extensions/registration.js'
import { ExtensionRegistry } from '../../src/extensions/registry.js'
import { trustedCopiesDir, trustProject } from '../../src/extensions/trust.js'
import { extension, python, tempLayout } from './helpers.js'

const { base, home, project, global, local } = tempLayout('ext-trusted-copy')
const open: ExtensionRegistry[] = []
after(async () => {
  await Promise.all(open.map((r) => r.close()))
  await closeRegistrationWorkers()
  rmSync(base, { recursive: true, force: true })
})

const planted = join(base, 'planted-ran')
const run = (r: ExtensionRegistry, session: string) =>
  r.toolsOf('probe')[0]!.run([], { sessionId: session } as never)

test('a trusted extension runs from its copy; later edits in the folder reach no worker', async () => {
  writeFileSync(
    join(local, 'probe.py'),
    extension(
      'probe',
      'import csv\nimport _helper as helper\n\ndef value():\n    """Value."""\n    return [helper.VALUE, getattr(csv, "VALUE", "stdlib csv")]\n',
      ', tools=[value]',
    ),
  )
  writeFileSync(join(local, '_helper.py'), 'VALUE = "trusted helper"\n')
  const trusted = trustProject(home, project, local)
  const r = await ExtensionRegistry.open({ home, project, python })
  open.push(r)
  assert.equal(r.warnings().length, 0, JSON.stringify(r.warnings()))
  const copy = join(trustedCopiesDir(home), trusted.sha256)
  assert.deepEqual(r.dirs, [copy, global], 'sys.path holds the copy, not the project folder')
  assert.equal(r.get('probe')?.path, join(copy, 'probe.py'))
  assert.equal(readFileSync(join(copy, '_helper.py'), 'utf8'), 'VALUE = "trusted helper"\n')
  assert.deepEqual(await run(r, 'one'), ['trusted helper', 'stdlib csv'])

  // What a session that can write the folder would do after the trust check.
  const evil = `open(${JSON.stringify(planted)}, "w").write("x")\nVALUE = "planted"\n`
  writeFileSync(join(local, '_helper.py'), evil)
  writeFileSync(join(local, 'csv.py'), evil)
  // The running session's worker and a new session's worker both keep the trusted bytes.
  assert.deepEqual(await run(r, 'one'), ['trusted helper', 'stdlib csv'])
  assert.deepEqual(await run(r, 'two'), ['trusted helper', 'stdlib csv'])
  assert.equal(existsSync(planted), false, 'a file written in the folder after trust ran on the host')
  assert.equal(existsSync(join(copy, 'csv.py')), false)

  // The next load sees the change: the folder stops loading, and the copy of it is not kept.
  await r.reload()
  assert.equal(r.get('probe'), undefined)
  assert.match(r.warnings().find((w) => w.code === 'ext.project-untrusted')?.reason ?? '', /changed since/)
  assert.deepEqual(r.dirs, [global])
  assert.equal(existsSync(planted), false)

  // Trusted again by the person (the helper edit reviewed): the new copy loads.
  writeFileSync(join(local, '_helper.py'), 'VALUE = "edited helper"\n')
  rmSync(join(local, 'csv.py'))
  const again = trustProject(home, project, local)
  await r.reload()
  assert.ok(r.dirs[0]?.startsWith(`${trustedCopiesDir(home)}${sep}${again.sha256}`), r.dirs.join(', '))
  assert.deepEqual(await run(r, 'three'), ['edited helper', 'stdlib csv'])
})
