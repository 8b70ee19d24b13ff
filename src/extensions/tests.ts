import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Store } from '../persistence/store.js'
import { VisError } from '../util/errors.js'
import { visHome } from '../util/home.js'
import { discoverExtensions, type ExtensionSource } from './discover.js'
import { type TestRecord, TestRun } from './manifest.js'
import { pythonReason, TrustedWorker } from './trusted-worker.js'

export type TestCounts = { passed: number; failed: number; errors: number; skipped: number; total: number }

export type ExtensionTestReport = {
  key: string
  path: string
  files: string[]
  records: TestRecord[]
  counts: TestCounts
  // No failure and no error among the records.
  ok: boolean
  noTests: boolean
}

const isTest = (name: string) => /^test_.*\.py$/.test(name) || /_test\.py$/.test(name)

// A package extension's tests are every test file under its directory; a single-file
// extension <key>.py owns test_<key>.py, test_<key>_*.py and <key>_test.py beside it.
export function testFilesOf(src: ExtensionSource): string[] {
  if (src.kind === 'package') {
    const out: string[] = []
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
        a.name.localeCompare(b.name),
      )) {
        if (e.name.startsWith('.') || e.name === '__pycache__') continue
        if (e.isDirectory()) walk(join(dir, e.name))
        else if (isTest(e.name)) out.push(join(dir, e.name))
      }
    }
    walk(src.dir)
    return out
  }
  return readdirSync(src.dir)
    .filter(
      (n) => n === `test_${src.key}.py` || n.startsWith(`test_${src.key}_`) || n === `${src.key}_test.py`,
    )
    .filter(isTest)
    .sort()
    .map((n) => join(src.dir, n))
}

export function countRecords(records: TestRecord[]): TestCounts {
  const c: TestCounts = { passed: 0, failed: 0, errors: 0, skipped: 0, total: records.length }
  for (const r of records) {
    if (r.outcome === 'passed' || r.outcome === 'xfailed') c.passed++
    else if (r.outcome === 'failed' || r.outcome === 'xpassed') c.failed++
    else if (r.outcome === 'error') c.errors++
    else c.skipped++
  }
  return c
}

function report(src: ExtensionSource, files: string[], records: TestRecord[]): ExtensionTestReport {
  const counts = countRecords(records)
  return {
    key: src.key,
    path: src.path,
    files,
    records,
    counts,
    ok: counts.failed === 0 && counts.errors === 0,
    noTests: counts.total === 0,
  }
}

export type RunTestsOptions = {
  home?: string
  project?: string
  python?: string
  store?: Store
  name?: string
}

// `vis ext test [name]`: real pytest in a fresh trusted worker per extension, with the
// extension realised exactly as the loader does and --import-mode=importlib.
export async function runExtensionTests(opts: RunTestsOptions = {}): Promise<ExtensionTestReport[]> {
  const home = visHome(opts.home)
  const discovery = discoverExtensions({ home, project: opts.project })
  const chosen = discovery.sources.filter((s) => opts.name === undefined || s.key === opts.name)
  if (opts.name !== undefined && chosen.length === 0) {
    throw new VisError(
      'ext.not-found',
      `no extension named ${opts.name} in ${discovery.dirs.join(', ') || 'any extension directory'}`,
    )
  }
  const out: ExtensionTestReport[] = []
  for (const src of chosen) {
    const files = testFilesOf(src)
    if (files.length === 0) {
      out.push(report(src, files, []))
      continue
    }
    const worker = await TrustedWorker.start({ home, python: opts.python, kv: opts.store?.kv })
    try {
      const spec = { key: src.key, scope: src.scope, kind: src.kind, path: src.path, dir: src.dir }
      let records: TestRecord[]
      try {
        records = TestRun.parse(
          await worker.call('vis_ext.pytest_runner', 'run_tests', [discovery.dirs, spec, files, src.dir]),
        ).records
      } catch (err) {
        // The extension itself did not load: every test file is unrunnable.
        const message = `the extension did not load: ${pythonReason(err)}`
        records = files.map((f) => ({ nodeid: f, outcome: 'error' as const, message, file: f }))
      }
      out.push(report(src, files, records))
    } finally {
      await worker.close()
    }
  }
  return out
}
