// bundle.json: what an offline bundle holds, every file with its size and sha256, so a
// copy can be checked before it is trusted (`vis bundle --verify DIR`).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { VisError } from '../util/errors.js'
import { describeFile, KIT_MANIFEST, type KitReport, listFiles, verifyKit } from './verify-kit.js'

export const BUNDLE_MANIFEST = KIT_MANIFEST

export const BundleFileSchema = z.object({
  path: z.string().min(1),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  entries: z.array(z.object({ key: z.string(), integrity: z.string() })).optional(),
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

// Every regular file under dir except the manifest itself, sorted, hashed (npm's index buckets
// with what each key points at, so a verify can tell npm's own rewrites from tampering).
export async function hashFiles(dir: string): Promise<BundleFile[]> {
  const out: BundleFile[] = []
  for (const path of listFiles(dir)) out.push(await describeFile(dir, path))
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

export type VerifyReport = KitReport

// Compares the files on disk with the manifest (verify-kit.ts: the same check the kit's own
// verify.mjs runs): changed, missing and unlisted files, npm's cache writes tolerated.
export async function verifyBundle(dir: string): Promise<VerifyReport> {
  return verifyKit(dir, readBundleManifest(dir).files)
}
