import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { readTextBeneath } from '../confinement/read-text.js'
import { resolveDistribution } from '../distribution/resolve.js'
import { errorMessage, VisError } from '../util/errors.js'
import { guestDir, visHome } from '../util/home.js'

// The files a project declares its import roots in. A directory with none of them gets nothing
// inferred, and no parser is started.
export const LAYOUT_METADATA = ['pyproject.toml', 'setup.cfg', 'pytest.ini', 'tox.ini'] as const

export const DeclaredEntry = z.object({
  file: z.string(),
  key: z.string(),
  kind: z.enum(['root', 'package', 'tests']),
  value: z.string(),
  package: z.string().optional(),
})
export type DeclaredEntry = z.infer<typeof DeclaredEntry>

export const LayoutWarning = z.object({ file: z.string(), message: z.string() })
export type LayoutWarning = z.infer<typeof LayoutWarning>

export const DeclaredLayout = z.object({
  entries: z.array(DeclaredEntry),
  warnings: z.array(LayoutWarning),
})
export type DeclaredLayout = z.infer<typeof DeclaredLayout>

export const LAYOUT_SCRIPT = join(guestDir, 'vis_ext', 'layout.py')
// Each metadata file is read up to this; a larger one is skipped with a warning.
export const MAX_LAYOUT_FILE_BYTES = 256 * 1024
// Parsing a few small files; anything slower is a wedged interpreter.
const PARSE_TIMEOUT_MS = 30_000

export type DeclaredOptions = { python?: string }

// Runs vis_ext/layout.py under the staged interpreter (isolated mode: no PYTHONPATH, no user
// site, no script dir on sys.path) so tomllib and configparser read the files exactly as the
// project's own tools would. Returns the raw declared strings.
// The project is a session root the sandbox writes, and the parser runs unconfined: so the host
// reads the files itself, beneath the directory's fd with no link on the way, regular files only,
// bounded (a pyproject.toml linked to a host file, a FIFO or a huge file is a warning), and the
// parser gets their text, never a path.
export async function readDeclaredLayout(
  projectDir: string,
  opts: DeclaredOptions = {},
): Promise<DeclaredLayout> {
  const files: Record<string, string> = {}
  const skipped: LayoutWarning[] = []
  for (const f of LAYOUT_METADATA) {
    const r = await readTextBeneath(projectDir, f, true, MAX_LAYOUT_FILE_BYTES)
    if (r.kind === 'text') files[f] = r.text
    else if (r.kind === 'skipped') skipped.push({ file: f, message: `not read: ${r.reason}` })
  }
  if (Object.keys(files).length === 0) return { entries: [], warnings: skipped }
  const dist = await resolveDistribution({ minor: opts.python, allowDownload: false })
  // Starting the interpreter to parse costs ~30–60 ms on every session's start: the answer is
  // kept per parser and metadata files' text, so only an edit re-parses.
  const key = createHash('sha256')
    .update(JSON.stringify([dist.executable, files]))
    .digest('hex')
    .slice(0, 32)
  let parsed = readCached(key)
  if (!parsed) {
    parsed = await parseDeclared(projectDir, dist.executable, files)
    writeCached(key, parsed)
  }
  return { entries: parsed.entries, warnings: [...skipped, ...parsed.warnings] }
}

const cacheDir = () => join(visHome(), 'cache', 'project-layout')

function readCached(key: string): DeclaredLayout | undefined {
  try {
    const r = DeclaredLayout.safeParse(JSON.parse(readFileSync(join(cacheDir(), `${key}.json`), 'utf8')))
    return r.success ? r.data : undefined
  } catch {
    return undefined
  }
}

// Best effort: a home that cannot be written only costs the parse next time.
function writeCached(key: string, layout: DeclaredLayout): void {
  try {
    mkdirSync(cacheDir(), { recursive: true })
    const tmp = join(cacheDir(), `.${key}.${process.pid}.tmp`)
    writeFileSync(tmp, JSON.stringify(layout))
    renameSync(tmp, join(cacheDir(), `${key}.json`))
  } catch {}
}

async function parseDeclared(
  projectDir: string,
  executable: string,
  files: Record<string, string>,
): Promise<DeclaredLayout> {
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile(
      executable,
      ['-I', '-B', LAYOUT_SCRIPT],
      { timeout: PARSE_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, env: { LC_ALL: 'C.UTF-8' } },
      (err, out, errOut) => {
        if (err) {
          reject(
            new VisError(
              'project.layout-failed',
              `could not read the project layout: ${errOut || errorMessage(err)}`,
              {
                path: projectDir,
              },
            ),
          )
        } else resolve(out)
      },
    )
    // A parser that dies before reading is reported by its exit, not by the pipe.
    child.stdin?.on('error', () => {})
    child.stdin?.end(JSON.stringify(files))
  })
  try {
    return DeclaredLayout.parse(JSON.parse(stdout))
  } catch (err) {
    throw new VisError(
      'project.layout-failed',
      `layout.py printed an unexpected answer: ${errorMessage(err)}`,
      {
        path: projectDir,
      },
    )
  }
}
