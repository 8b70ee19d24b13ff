// Run from the TypeScript sources, a worker's script is the child entry bundled into
// <package>/.cache/worker/, and a process prunes the bundles nobody used for an hour. Test
// runs start from different directories and run side by side: a bundle must not depend on the
// directory a process started in (two different bundles of the same sources made each process
// prune the other's while its workers started: "Cannot find module …/child-….mjs"), a bundle
// in use must look used, and one removed under a process is written again.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, rmSync, statSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { entryScript } from '../../src/util/bundle.js'
import { packageRoot } from '../../src/util/home.js'
import { childEntry } from '../../src/worker/entry.js'

const run = promisify(execFile)

// The last two tests age and remove a bundle: their own, in a folder of their own, never the
// one the test files running beside this one start their workers from.
const folder = `test-child-entry-${process.pid}`
const scratch = () =>
  entryScript(pathToFileURL(join(packageRoot, 'src', 'worker', 'entry.ts')).href, 'child', {
    folder,
    externalPackages: true,
  })
after(() => rmSync(join(packageRoot, '.cache', folder), { recursive: true, force: true }))

async function entryFrom(cwd: string): Promise<string> {
  const entry = join(packageRoot, 'src', 'worker', 'entry.ts')
  const { stdout } = await run(
    process.execPath,
    [
      '--import',
      import.meta.resolve('tsx'),
      '--input-type=module',
      '-e',
      `const { childEntry } = await import(${JSON.stringify(entry)}); console.log(await childEntry())`,
    ],
    { cwd, timeout: 120_000 },
  )
  return stdout.trim()
}

test('processes started in different directories bundle the child into the same file', async () => {
  const [fromRoot, fromTmp, fromPackage] = await Promise.all([
    entryFrom('/'),
    entryFrom(tmpdir()),
    entryFrom(packageRoot),
  ])
  assert.match(fromPackage, /\/\.cache\/worker\/child-[0-9a-f]{16}\.mjs$/)
  assert.equal(fromRoot, fromPackage)
  assert.equal(fromTmp, fromPackage)
  assert.equal(await childEntry(), fromPackage, 'and this process too')
})

test('each use marks the bundle used, so another process does not prune it', async () => {
  const path = await scratch()
  const hoursAgo = new Date(Date.now() - 2 * 3_600_000)
  utimesSync(path, hoursAgo, hoursAgo)
  assert.equal(await scratch(), path)
  assert.ok(Date.now() - statSync(path).mtimeMs < 60_000, 'used just now')
})

test('a bundle removed under a process that uses it is written again', async () => {
  const path = await scratch()
  assert.ok(path.includes(`/.cache/${folder}/child-`), path)
  rmSync(path)
  assert.equal(await scratch(), path)
  assert.ok(existsSync(path))
})
