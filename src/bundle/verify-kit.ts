// Checking an offline kit against its bundle.json: the one implementation, used by
// `vis bundle --verify DIR` and copied into every kit as verify.mjs, which runs with nothing
// installed (`node DIR/verify.mjs`): so this module imports only Node's own modules.
//
// npm writes into the kit's cache when it installs from it (--cache DIR/npm-cache): a debug
// log, index entries for the tarball it was handed, and index buckets rewritten in place. Those
// are tolerated, and only those: an index bucket may change or appear when every key it maps
// keeps the content the kit recorded for it, and a new key maps to content the kit already
// holds. Content files, the tarball, the archives and everything else must be exactly as made.
import { createHash } from 'node:crypto'
import { createReadStream, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { pathToFileURL } from 'node:url'

export const KIT_MANIFEST = 'bundle.json'
export const KIT_VERIFIER = 'verify.mjs'

const INDEX_DIR = 'npm-cache/_cacache/index-v5/'
// What npm itself leaves in a cache it used: logs, its update check, half-written temp files.
const NPM_SCRATCH = /^npm-cache\/(_logs\/[^/]+\.log|_update-notifier-last-checked|_cacache\/tmp\/.+)$/

// One entry of a cacache index bucket: a key (a request URL, a tarball spec) and the content.
export type IndexEntry = { key: string; integrity: string }

export type KitFile = {
  path: string
  size: number
  sha256: string
  // For npm's index buckets: what each key pointed at when the kit was made.
  entries?: IndexEntry[]
}

export type KitReport = { ok: number; tolerated: string[]; problems: string[] }

export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256')
    createReadStream(file)
      .on('data', (d) => hash.update(d))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')))
  })
}

function walk(dir: string, root: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name)
    if (entry.isDirectory()) walk(p, root, out)
    else if (entry.isFile()) out.push(relative(root, p).split(sep).join('/'))
  }
}

// Every regular file under dir except the manifest, sorted.
export function listFiles(dir: string): string[] {
  const paths: string[] = []
  walk(dir, dir, paths)
  return paths.filter((p) => p !== KIT_MANIFEST).sort()
}

// A bucket's lines are "<sha1 of the JSON>\t<JSON>"; a later line for a key wins.
export function readIndexEntries(file: string): IndexEntry[] | undefined {
  const out: IndexEntry[] = []
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue
    const tab = line.indexOf('\t')
    if (tab < 0) return undefined
    const json = line.slice(tab + 1)
    if (createHash('sha1').update(json).digest('hex') !== line.slice(0, tab)) return undefined
    try {
      const e = JSON.parse(json) as { key?: unknown; integrity?: unknown }
      if (typeof e.key !== 'string') return undefined
      out.push({ key: e.key, integrity: typeof e.integrity === 'string' ? e.integrity : '' })
    } catch {
      return undefined
    }
  }
  return out
}

export async function describeFile(dir: string, path: string): Promise<KitFile> {
  const file = join(dir, path)
  const entries = path.startsWith(INDEX_DIR) ? readIndexEntries(file) : undefined
  return { path, size: statSync(file).size, sha256: await sha256File(file), ...(entries ? { entries } : {}) }
}

export async function verifyKit(dir: string, files: KitFile[]): Promise<KitReport> {
  const recorded = new Map(files.map((f) => [f.path, f]))
  // Every key the kit's index knew, and every content it vouches for.
  const keys = new Map<string, string>()
  const known = new Set<string>()
  for (const f of files)
    for (const e of f.entries ?? []) {
      keys.set(e.key, e.integrity)
      if (e.integrity) known.add(e.integrity)
    }
  const report: KitReport = { ok: 0, tolerated: [], problems: [] }
  const indexChange = (path: string, why: string): void => {
    const entries = readIndexEntries(join(dir, path))
    if (!entries) return void report.problems.push(`${path}: ${why}, and it is not an npm index bucket`)
    const bad = entries.filter((e) =>
      keys.has(e.key) ? keys.get(e.key) !== e.integrity : !known.has(e.integrity),
    )
    if (bad.length)
      report.problems.push(
        `${path}: ${why}: ${bad.map((e) => `${e.key} now points at ${e.integrity || 'nothing'}`).join('; ')}`,
      )
    else report.tolerated.push(`${path}: ${why} by npm (every key keeps the kit's content)`)
  }
  const present = new Set(listFiles(dir))
  for (const f of files) {
    if (!present.has(f.path)) {
      report.problems.push(`${f.path}: missing`)
      continue
    }
    present.delete(f.path)
    const sha = await sha256File(join(dir, f.path))
    if (sha === f.sha256) report.ok++
    else if (f.entries) indexChange(f.path, 'rewritten')
    else report.problems.push(`${f.path}: sha256 ${sha}, the manifest says ${f.sha256}`)
  }
  for (const path of present) {
    if (recorded.has(path)) continue
    if (NPM_SCRATCH.test(path)) report.tolerated.push(`${path}: written by npm`)
    else if (path.startsWith(INDEX_DIR)) indexChange(path, 'added')
    else report.problems.push(`${path}: not in the manifest`)
  }
  return report
}

// `node verify.mjs [DIR]` in a kit (DIR defaults to the kit the script sits in).
async function main(): Promise<void> {
  const dir = process.argv[2] ?? new URL('.', import.meta.url).pathname
  let files: KitFile[]
  try {
    files = (JSON.parse(readFileSync(join(dir, KIT_MANIFEST), 'utf8')) as { files: KitFile[] }).files
    if (!Array.isArray(files)) throw new Error('no "files" list')
  } catch (err) {
    console.error(`${join(dir, KIT_MANIFEST)} is missing or not a bundle manifest: ${(err as Error).message}`)
    process.exit(2)
  }
  const r = await verifyKit(dir, files)
  for (const p of r.problems) console.log(`BAD  ${p}`)
  const note = r.tolerated.length ? `, ${r.tolerated.length} written by npm (allowed)` : ''
  console.log(
    r.problems.length
      ? `${r.problems.length} problems, ${r.ok} files intact${note}`
      : `bundle ${dir}: ${r.ok} files intact${note}`,
  )
  process.exit(r.problems.length ? 1 : 0)
}

const self = process.argv[1]
if (self && import.meta.url === pathToFileURL(realpathSync(self)).href) await main()
