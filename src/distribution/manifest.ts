import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { VisError } from '../util/errors.js'

const version = z.string().regex(/^\d+\.\d+\.\d+([a-z]+\d+)?$/)
const minor = z.string().regex(/^\d+\.\d+$/)

// vis-dist.json, written into every tree we stage or unpack.
export const DistManifestSchema = z.object({
  version,
  minor,
  platform: z.string().min(1),
  source: z.string().min(1),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  packages: z.array(z.string()).default([]),
  // What `--with` asked for (sets expanded to package names), and the shared libraries
  // copied into lib/deps for them.
  requested: z.array(z.string()).optional(),
  libraries: z.array(z.string()).optional(),
  created: z.string().optional(),
})
export type DistManifest = z.infer<typeof DistManifestSchema>

// The .json beside an archive (and the per-minor alias of it).
export const ArchiveManifestSchema = z.object({
  version,
  minor,
  platform: z.string().min(1),
  file: z.string().regex(/^[^/\\]+\.tar\.gz$/),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
  packages: z.array(z.string()).default([]),
})
export type ArchiveManifest = z.infer<typeof ArchiveManifestSchema>

export function parseDistManifest(text: string, path: string): DistManifest {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (err) {
    throw new VisError('dist.manifest', `${path} is not JSON: ${(err as Error).message}`, { path })
  }
  const parsed = DistManifestSchema.safeParse(raw)
  if (!parsed.success) {
    throw new VisError(
      'dist.manifest',
      `${path} is not a valid distribution manifest: ${parsed.error.message}`,
      {
        path,
      },
    )
  }
  return parsed.data
}

export function readDistManifest(path: string): DistManifest {
  return parseDistManifest(readFileSync(path, 'utf8'), path)
}

export function parseArchiveManifest(text: string, where: string): ArchiveManifest {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (err) {
    throw new VisError(
      'dist.manifest',
      `archive manifest at ${where} is not JSON: ${(err as Error).message}`,
      {
        url: where,
      },
    )
  }
  const parsed = ArchiveManifestSchema.safeParse(raw)
  if (!parsed.success) {
    throw new VisError('dist.manifest', `archive manifest at ${where} is invalid: ${parsed.error.message}`, {
      url: where,
    })
  }
  return parsed.data
}

export function writeManifest(root: string, manifest: DistManifest): void {
  writeFileSync(join(root, 'vis-dist.json'), `${JSON.stringify(manifest, null, 2)}\n`)
}
