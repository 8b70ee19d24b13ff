import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
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
// Parsing a few small files; anything slower is a wedged interpreter.
const PARSE_TIMEOUT_MS = 30_000

export type DeclaredOptions = { python?: string }

// Runs vis_ext/layout.py under the staged interpreter (isolated mode: no PYTHONPATH, no user
// site, no script dir on sys.path) so tomllib and configparser read the files exactly as the
// project's own tools would. Returns the raw declared strings.
export async function readDeclaredLayout(
  projectDir: string,
  opts: DeclaredOptions = {},
): Promise<DeclaredLayout> {
  const dist = await resolveDistribution({ minor: opts.python, allowDownload: false })
  // Starting the interpreter to parse costs ~30–60 ms on every session's start: the answer is
  // kept per project, parser and metadata files' (size, mtime), so only an edit re-parses.
  const key = cacheKey(projectDir, dist.executable)
  const cached = readCached(key)
  if (cached) return cached
  const parsed = await parseDeclared(projectDir, dist.executable)
  writeCached(key, parsed)
  return parsed
}

function cacheKey(projectDir: string, executable: string): string {
  const stamps = LAYOUT_METADATA.map((f) => {
    try {
      const st = statSync(join(projectDir, f))
      return [f, st.size, st.mtimeMs, st.ino]
    } catch {
      return [f, null]
    }
  })
  return createHash('sha256')
    .update(JSON.stringify([projectDir, executable, stamps]))
    .digest('hex')
    .slice(0, 32)
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

async function parseDeclared(projectDir: string, executable: string): Promise<DeclaredLayout> {
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      executable,
      ['-I', '-B', LAYOUT_SCRIPT, projectDir],
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
