// bundle.json: what an offline bundle holds, every file with its size and sha256, so a
// copy can be checked before it is trusted (`vis bundle --verify DIR`).
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { z } from 'zod'
import { sha256File } from '../distribution/archive.js'
import { VisError } from '../util/errors.js'

export const BUNDLE_MANIFEST = 'bundle.json'

export const BundleFileSchema = z.object({
  path: z.string().min(1),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
})

export const BundleManifestSchema = z.object({
  format: z.literal(1),
  package: z.object({ name: z.string(), version: z.string(), tarball: z.string() }),
  platform: z.string(),
  python: z.array(z.object({ minor: z.string(), version: z.string(), archive: z.string() })),
  created: z.string(),
  files: z.array(BundleFileSchema),
})
export type BundleManifest = z.infer<typeof BundleManifestSchema>
export type BundleFile = z.infer<typeof BundleFileSchema>

function walk(dir: string, root: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name)
    if (entry.isDirectory()) walk(p, root, out)
    else if (entry.isFile()) out.push(relative(root, p).split(sep).join('/'))
  }
}

// Every regular file under dir except the manifest itself, sorted, hashed.
export async function hashFiles(dir: string): Promise<BundleFile[]> {
  const paths: string[] = []
  walk(dir, dir, paths)
  const out: BundleFile[] = []
  for (const path of paths.filter((p) => p !== BUNDLE_MANIFEST).sort()) {
    const file = join(dir, path)
    out.push({ path, size: statSync(file).size, sha256: await sha256File(file) })
  }
  return out
}

export function readBundleManifest(dir: string): BundleManifest {
  const path = join(dir, BUNDLE_MANIFEST)
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'))
  } catch (err) {
    throw new VisError('bundle.manifest', `${path} is missing or not JSON: ${(err as Error).message}`, {
      path,
    })
  }
  const parsed = BundleManifestSchema.safeParse(raw)
  if (!parsed.success)
    throw new VisError('bundle.manifest', `${path} is not a bundle manifest: ${parsed.error.message}`, {
      path,
    })
  return parsed.data
}

export type VerifyReport = { ok: number; problems: string[] }

// Compares the files on disk with the manifest: changed, missing and unlisted files.
export async function verifyBundle(dir: string): Promise<VerifyReport> {
  const manifest = readBundleManifest(dir)
  const actual = new Map((await hashFiles(dir)).map((f) => [f.path, f]))
  const problems: string[] = []
  let ok = 0
  for (const f of manifest.files) {
    const got = actual.get(f.path)
    actual.delete(f.path)
    if (!got) problems.push(`${f.path}: missing`)
    else if (got.sha256 !== f.sha256)
      problems.push(`${f.path}: sha256 ${got.sha256}, the manifest says ${f.sha256}`)
    else ok++
  }
  for (const path of actual.keys()) problems.push(`${path}: not in the manifest`)
  return { ok, problems }
}
