// The tree the batteries tests run on: CPython 3.11 with pytest and the `data` and `web`
// sets from Debian's packages. CI stages it into .cache/batteries-dist (.ci/run; apart from
// the lean tree the package ships) and the tests use that, or cpython-dist/ when it carries
// the sets; elsewhere it is staged once per test run into a temp dir shared by the files
// of the run (the .debs cache beside it is kept across runs).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findLocalPython } from '../../src/distribution/discover.js'
import { defaultDistDir, stagedTreeRoot } from '../../src/distribution/layout.js'
import { readDistManifest } from '../../src/distribution/manifest.js'
import { parseWith, requestedNames, SETS } from '../../src/distribution/packages/sets.js'
import { platformTag } from '../../src/distribution/platform.js'
import { stageFromPython } from '../../src/distribution/stage.js'
import { packageRoot } from '../../src/util/home.js'
import { isRunning } from '../../src/util/proc.js'

export const MINOR = '3.11'
export const WANTED = [...SETS.data!, ...SETS.web!]

function hasSets(root: string): boolean {
  try {
    const m = readDistManifest(join(root, 'vis-dist.json'))
    return WANTED.every((p) => m.requested?.includes(p))
  } catch {
    return false
  }
}

const base = join(tmpdir(), `vis-batteries-${process.ppid}`)
const debCache = join(tmpdir(), 'vis-batteries-debs')

let cached: Promise<string> | undefined

// The distribution root (python/) holding the sets.
export function batteriesTree(): Promise<string> {
  cached ??= find()
  return cached
}

async function find(): Promise<string> {
  for (const dir of [join(packageRoot, '.cache', 'batteries-dist'), defaultDistDir()]) {
    const staged = stagedTreeRoot(dir, MINOR, platformTag())
    if (hasSets(staged)) return staged
  }
  const root = stagedTreeRoot(join(base, 'out'), MINOR, platformTag())
  const ready = join(base, 'ready')
  try {
    mkdirSync(base)
  } catch {
    for (let i = 0; i < 1800 && !existsSync(ready); i++) await new Promise((r) => setTimeout(r, 200))
    if (!existsSync(ready)) throw new Error(`the batteries tree in ${base} never became ready`)
    return root
  }
  for (const name of readdirSync(tmpdir())) {
    const m = /^vis-batteries-(\d+)$/.exec(name)
    if (m && Number(m[1]) !== process.ppid && !isRunning(Number(m[1]))) {
      rmSync(join(tmpdir(), name), { recursive: true, force: true })
    }
  }
  const py = findLocalPython(MINOR)
  if (!py) throw new Error(`the batteries tests need a local shared-library CPython ${MINOR}`)
  // The .debs are cached outside the per-run dir: a second run downloads nothing.
  mkdirSync(join(base, 'out'), { recursive: true })
  mkdirSync(debCache, { recursive: true })
  const { symlinkSync } = await import('node:fs')
  symlinkSync(debCache, join(base, 'out', '.debs'))
  await stageFromPython(py.executable, {
    out: join(base, 'out'),
    withPytest: true,
    packages: parseWith(['data,web']),
    archive: false,
  })
  writeFileSync(`${ready}.tmp`, root)
  renameSync(`${ready}.tmp`, ready)
  return root
}

export function manifestOf(root: string) {
  return readDistManifest(join(root, 'vis-dist.json'))
}

export const requestedFor = (values: string[]) => requestedNames(parseWith(values))

export function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'))
}
