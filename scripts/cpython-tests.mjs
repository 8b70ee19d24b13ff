#!/usr/bin/env node
// The yardstick: CPython's own regression tests, module by module, under the staged
// bin/python3.X and under `vis python` in the same run, compared per test case through
// regrtest's --junit-xml. Exits 1 when a case passes under python3 and not under
// `vis python`, unless docs/cpython-tests.md lists it as impossible in an embedding.
//
// The shipped tree has no `test` package and no _test* extension modules (src/distribution/
// slim.ts): a copy of the staged tree gets them back from the CPython prefix it was staged
// from (the pyenv prefix of the same version), in a temp dir, never shipped.
//
//   node scripts/cpython-tests.mjs [--minor 3.11] [--jobs 2] [--timeout 300]
//        [--modules test_signal,test_io] [--keep]
import { spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..')
// The platform seam (dist/distribution/platform.js): this machine's platform tag.
const { platformTag } = await import(new URL('../dist/distribution/platform.js', import.meta.url).href)

// signals, select/selectors, threading, processes, os, sockets, files, io, asyncio, and
// every stdlib module the guest runtime (vis-guest/vis_guest) imports.
export const DEFAULT_MODULES = [
  'test_signal',
  'test_select',
  'test_selectors',
  'test_threading',
  'test_subprocess',
  'test_os',
  'test_socket',
  'test_tempfile',
  'test_io',
  'test_fcntl',
  'test_asyncio.test_events',
  'test_asyncio.test_subprocess',
  'test_asyncio.test_tasks',
  'test_asyncio.test_unix_events',
  'test_json',
  'test_ast',
  'test_re',
  'test_base64',
  'test_collections',
  'test_difflib',
  'test_dis',
  'test_errno',
  'test_functools',
  'test_importlib',
  'test_inspect',
  'test_keyword',
  'test_linecache',
  'test_mimetypes',
  'test_pathlib',
  'test_textwrap',
  'test_time',
  'test_types',
  'test_unicodedata',
]

// Test cases left out of every run, for both interpreters (regrtest --ignore patterns),
// each with its reason in docs/cpython-tests.md ("Left out everywhere").
const IGNORED = ['*VSOCK*']

const { values: args } = parseArgs({
  options: {
    minor: { type: 'string', default: process.env.VIS_PYTHON_VERSION ?? '3.11' },
    jobs: { type: 'string', default: '2' },
    timeout: { type: 'string', default: '300' },
    modules: { type: 'string' },
    prefix: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
})
const minor = args.minor
const jobs = Math.max(1, Number(args.jobs))
const timeoutMs = Number(args.timeout) * 1000
const modules = args.modules ? args.modules.split(',').filter(Boolean) : DEFAULT_MODULES

function fail(msg) {
  process.stderr.write(`cpython-tests: ${msg}\n`)
  process.exit(2)
}

// ---- the tree ------------------------------------------------------------------

function stagedTree() {
  const base = join(process.env.VIS_PYTHON_STAGED_DIR ?? join(repo, 'cpython-dist'), minor)
  if (!existsSync(base))
    fail(`Python ${minor} is not staged under ${base} (vis runtime stage --python ${minor})`)
  // This machine's own tree: others (an arm64 one staged for a release) cannot run here.
  const platform = platformTag()
  if (!existsSync(join(base, platform, 'python', 'bin', `python${minor}`)))
    fail(`no staged tree for ${platform} with bin/python${minor} under ${base}`)
  return { platform, root: join(base, platform, 'python') }
}

function versionOf(python) {
  const manifest = join(dirname(dirname(python)), 'vis-dist.json')
  const v = existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')).version : undefined
  if (typeof v === 'string') return v
  fail(`cannot read the version from ${manifest}`)
}

// The CPython prefix holding the same version's test package (pyenv's by default).
function sourcePrefix(version) {
  const prefix = args.prefix ?? join(process.env.PYENV_ROOT ?? '/root/.pyenv', 'versions', version)
  if (!existsSync(join(prefix, 'lib', `python${minor}`, 'test', 'regrtest.py'))) {
    fail(
      `${prefix} has no lib/python${minor}/test (pass --prefix, a CPython ${version} prefix with its tests)`,
    )
  }
  return prefix
}

// Only what the stage strips for being a test of CPython itself.
const TEST_EXTENSIONS = /^(_test|_ctypes_test|xxlimited|xxsubtype|_xxsubinterpreters|_xxinterpchannels)/

function buildTree() {
  const staged = stagedTree()
  const version = versionOf(join(staged.root, 'bin', `python${minor}`))
  const prefix = sourcePrefix(version)
  const dir = mkdtempSync(join(tmpdir(), `vis-cpython-tests-${minor}-`))
  const root = join(dir, minor, staged.platform, 'python')
  mkdirSync(dirname(root), { recursive: true })
  cpSync(staged.root, root, { recursive: true, verbatimSymlinks: true })
  const stdlib = join('lib', `python${minor}`)
  cpSync(join(prefix, stdlib, 'test'), join(root, stdlib, 'test'), { recursive: true })
  const dynload = join(stdlib, 'lib-dynload')
  for (const name of readdirSync(join(prefix, dynload))) {
    if (TEST_EXTENSIONS.test(name)) cpSync(join(prefix, dynload, name), join(root, dynload, name))
  }
  return { dir, root, version }
}

// ---- runs ----------------------------------------------------------------------

function runOne(argv, env, cwd, xml) {
  return new Promise((resolve) => {
    const started = Date.now()
    const child = spawn(argv[0], argv.slice(1), {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let tail = ''
    const keep = (d) => {
      tail = (tail + d).slice(-4000)
    }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {}
    }, timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, timedOut, tail, ms: Date.now() - started, cases: readCases(xml) })
    })
  })
}

// regrtest's junit XML: passed = a testcase with no failure, error or skipped inside.
function readCases(xml) {
  const cases = new Map()
  if (!existsSync(xml)) return cases
  const text = readFileSync(xml, 'utf8')
  const re = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const name = /\bname="([^"]*)"/.exec(m[1])?.[1]
    if (!name) continue
    const body = m[3] ?? ''
    const outcome = /<failure\b/.test(body)
      ? 'failed'
      : /<error\b/.test(body)
        ? 'error'
        : /<skipped\b/.test(body)
          ? 'skipped'
          : 'passed'
    cases.set(xmlText(name), outcome)
  }
  return cases
}

function xmlText(s) {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
}

// docs/cpython-tests.md: rows `| \`test.id\` | minors | reason |` name the cases that
// cannot pass in an embedding; minors is "all" or a comma list.
function exclusions() {
  const doc = join(repo, 'docs', 'cpython-tests.md')
  const out = new Map()
  if (!existsSync(doc)) return out
  for (const line of readFileSync(doc, 'utf8').split('\n')) {
    const m = /^\|\s*`(test\.[^`]+)`\s*\|\s*([^|]+?)\s*\|\s*(.+?)\s*\|\s*$/.exec(line)
    if (!m) continue
    const minors = m[2].split(',').map((s) => s.trim())
    if (minors.includes('all') || minors.includes(minor)) out.set(m[1], m[3])
  }
  return out
}

async function pool(items, n, fn) {
  const results = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        results[i] = await fn(items[i], i)
      }
    }),
  )
  return results
}

function status(r) {
  if (r.timedOut) return `timeout ${timeoutMs / 1000}s`
  if (r.cases.size === 0) return r.signal ? `killed by ${r.signal}` : `no results (exit ${r.code})`
  return ''
}

async function main() {
  const tree = buildTree()
  const python = join(tree.root, 'bin', `python${minor}`)
  const work = join(tree.dir, 'work')
  mkdirSync(work)
  const baseEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    LANG: process.env.LANG ?? 'C.UTF-8',
    TMPDIR: tmpdir(),
  }
  const visEnv = { ...baseEnv, VIS_PYTHON_STAGED_DIR: tree.dir, VIS_PYTHON_VERSION: minor }
  if (process.env.VIS_HOME) visEnv.VIS_HOME = process.env.VIS_HOME
  const excluded = exclusions()
  process.stdout.write(`CPython ${tree.version} regression tests: python3 (${python}) against vis python\n`)
  const rows = await pool(modules, jobs, async (mod, i) => {
    const dirs = ['py', 'vis'].map((k) => {
      const d = join(work, `${i}-${k}`)
      mkdirSync(d)
      return d
    })
    const regr = (xml) => ['-m', 'test', mod, '--junit-xml', xml, ...IGNORED.flatMap((p) => ['--ignore', p])]
    const py = await runOne(
      [python, ...regr(join(dirs[0], 'out.xml'))],
      baseEnv,
      dirs[0],
      join(dirs[0], 'out.xml'),
    )
    const vis = await runOne(
      [process.execPath, join(repo, 'bin', 'vis.js'), 'python', ...regr(join(dirs[1], 'out.xml'))],
      visEnv,
      dirs[1],
      join(dirs[1], 'out.xml'),
    )
    const lost = []
    const waived = []
    for (const [name, outcome] of py.cases) {
      if (outcome !== 'passed' || vis.cases.get(name) === 'passed') continue
      const row = `${name}: ${vis.cases.get(name) ?? 'not run'}`
      if (excluded.has(name)) waived.push(row)
      else lost.push(row)
    }
    const count = (r) => [...r.cases.values()].filter((o) => o === 'passed').length
    process.stderr.write(`  ${mod}: ${(py.ms / 1000).toFixed(0)}s / ${(vis.ms / 1000).toFixed(0)}s\n`)
    return { mod, py, vis, pyPassed: count(py), visPassed: count(vis), lost, waived }
  })
  const w = Math.max(...modules.map((m) => m.length), 6)
  const line = (a, b, c, d) => `${a.padEnd(w)}  ${String(b).padStart(8)}  ${String(c).padStart(11)}  ${d}\n`
  process.stdout.write(`\n${line('module', 'python3', 'vis python', 'differ')}`)
  let lostTotal = 0
  for (const r of rows) {
    const note = [status(r.py) && `python3: ${status(r.py)}`, status(r.vis) && `vis: ${status(r.vis)}`]
      .filter(Boolean)
      .join('; ')
    process.stdout.write(
      line(
        r.mod,
        r.pyPassed,
        r.visPassed,
        `${r.lost.length}${r.waived.length ? ` (+${r.waived.length} excluded)` : ''}${note ? `  [${note}]` : ''}`,
      ),
    )
    lostTotal += r.lost.length
  }
  for (const r of rows) {
    for (const l of r.lost) process.stdout.write(`  passes under python3, not under vis python: ${l}\n`)
    if (r.lost.length && status(r.vis))
      process.stdout.write(`  ${r.mod} (vis python) output tail:\n${r.vis.tail}\n`)
  }
  if (!args.keep) rmSync(tree.dir, { recursive: true, force: true })
  else process.stdout.write(`tree kept: ${tree.dir}\n`)
  process.exit(lostTotal > 0 ? 1 : 0)
}

await main()
