#!/usr/bin/env node
// Runs the test suite with node's test runner (TypeScript through tsx).
// Suites whose behaviour depends on the Python minor (test/native, test/guest, test/worker)
// run again for every other staged minor, so CI exercises 3.11 and 3.12 alike.
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const args = process.argv.slice(2)
const filters = args.filter((a) => !a.startsWith('--'))

function walk(dir) {
  const out = []
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...walk(p))
    else if (name.endsWith('.test.ts')) out.push(relative(root, p))
  }
  return out.sort()
}

const all = walk(join(root, 'test')).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
const perMinor = all.filter((f) => /^test\/(native|guest|worker)\//.test(f))

// Every temporary folder the tests make (vis homes, roots, fixtures; thousands a run) goes under
// one folder for this run, removed at the end: a test killed mid-way or one that forgets its
// folders leaves nothing behind, and the user's vis-home registry (~/.vis/homes) drops those
// homes' entries once they are gone. VIS_TEST_KEEP_TMP=1 keeps it to look at a failure.
const runTmp = mkdtempSync(join(tmpdir(), 'vt-'))
// Passable by other users (not listable): the scratch PostgreSQL runs as `postgres` in a folder
// made for it beneath this one.
chmodSync(runTmp, 0o711)
// Ctrl-C reaches the test runner too (one process group); this process then goes on to clean up.
process.on('SIGINT', () => {})

function run(files, env) {
  if (files.length === 0) return 0
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
    { cwd: root, stdio: 'inherit', env: { ...process.env, TMPDIR: runTmp, ...env } },
  )
  return r.status ?? 1
}

function stagedMinors() {
  const dir = join(root, 'cpython-dist')
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((n) => /^3\.\d+$/.test(n))
    .sort()
}

let status = run(all, {})
const minors = stagedMinors()
// The supported minors not staged here: their per-minor runs are skipped, each said in one line
// with the command that stages it (pyenv's CPython of that minor must be installed); under
// VIS_TEST_REQUIRE_ALL=1 (CI) a missing one fails the run instead.
const { SUPPORTED_MINORS } = await import(new URL('../dist/distribution/platform.js', import.meta.url).href)
for (const minor of SUPPORTED_MINORS.filter((m) => !minors.includes(m))) {
  if (filters.length && perMinor.length === 0) break
  const line = `needs CPython ${minor} staged for the per-minor suites: run \`node bin/vis.js runtime stage --python ${minor}\` (then \`npm run build:addon\`)`
  if (process.env.VIS_TEST_REQUIRE_ALL === '1') {
    console.error(`\n# FAIL ${line} (VIS_TEST_REQUIRE_ALL=1: no skips)`)
    status ||= 1
  } else console.log(`\n# SKIP ${line}`)
}
const primary = process.env.VIS_PYTHON_VERSION ?? minors[0]
for (const minor of minors) {
  if (minor === primary || process.env.VIS_TEST_ONE_MINOR) continue
  console.log(`\n# again with Python ${minor}: ${perMinor.length} files`)
  status = run(perMinor, { VIS_PYTHON_VERSION: minor }) || status
}
if (process.env.VIS_TEST_KEEP_TMP === '1')
  console.log(`\n# the tests' temporary folders are kept in ${runTmp}`)
else {
  try {
    rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 })
  } catch (e) {
    console.error(`\n# could not remove the tests' temporary folder ${runTmp}: ${e.message}`)
  }
}
process.exit(status)
