// A test needing an absent piece skips with one line naming it and the command that provides
// it; under VIS_TEST_REQUIRE_ALL=1 (CI) the same file fails instead. Run through node's test
// runner on a small test file that uses test/helpers/needs.ts.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { repoRoot, runCollected, tempDir } from './helpers.js'

const file = join(tempDir('vis-needs-'), 'probe.test.ts')
writeFileSync(
  file,
  `import { test } from 'node:test'
import { needs } from ${JSON.stringify(join(repoRoot, 'test', 'helpers', 'needs.ts'))}
test('uses CPython 3.99', { skip: needs(false, 'CPython 3.99 staged', 'node bin/vis.js runtime stage --python 3.99') }, () => {})
test('uses what is here', { skip: needs(true, 'nothing', 'true') }, () => {})
`,
)

const runProbe = (env: NodeJS.ProcessEnv) =>
  runCollected(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', file], {
    cwd: repoRoot,
    env,
  })

test('an absent piece: one skip line naming it and its command; under VIS_TEST_REQUIRE_ALL=1 a failure', async () => {
  const env = { ...process.env }
  delete env.VIS_TEST_REQUIRE_ALL
  delete env.NODE_TEST_CONTEXT // else the probe reports to this runner instead of printing
  const relaxed = await runProbe(env)
  assert.equal(relaxed.status, 0, relaxed.out)
  assert.match(
    relaxed.out,
    /uses CPython 3\.99 .*# needs CPython 3\.99 staged: run `node bin\/vis\.js runtime stage --python 3\.99`/,
  )
  assert.match(relaxed.out, /skipped 1/)
  assert.match(relaxed.out, /pass 1/)

  const strict = await runProbe({ ...env, VIS_TEST_REQUIRE_ALL: '1' })
  assert.notEqual(strict.status, 0, strict.out)
  assert.match(
    strict.out,
    /needs CPython 3\.99 staged: run `node bin\/vis\.js runtime stage --python 3\.99` \(VIS_TEST_REQUIRE_ALL=1: no skips\)/,
  )
  assert.doesNotMatch(strict.out, /skipped 1/)
})
