import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { z } from 'zod'
import { resolveDistribution } from '../distribution/resolve.js'
import { errorMessage, VisError } from '../util/errors.js'
import { guestDir } from '../util/home.js'

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
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      dist.executable,
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
