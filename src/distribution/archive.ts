import { createHash } from 'node:crypto'
import { createReadStream, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { VisError } from '../util/errors.js'
import { archiveManifestName, archiveName } from './layout.js'
import type { ArchiveManifest } from './manifest.js'
import { run } from './tools.js'

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

// Packs treeDir as a top-level `python/` directory (the install_only layout),
// whatever treeDir is called on disk, so a tree still in its temp dir can be
// archived before it is renamed into place.
export async function packTree(treeDir: string, outFile: string): Promise<{ sha256: string; size: number }> {
  const partial = `${outFile}.partial-${process.pid}`
  const name = basename(treeDir)
  const args = ['-C', dirname(treeDir), '--sort=name', '--owner=0', '--group=0', '--numeric-owner']
  if (name !== 'python') args.push(`--transform=s,^${escapeRegex(name)},python,`)
  try {
    await run('tar', [...args, '-czf', partial, name], { code: 'dist.archive' })
    renameSync(partial, outFile)
  } catch (err) {
    rmSync(partial, { force: true })
    throw err
  }
  return { sha256: await sha256File(outFile), size: statSync(outFile).size }
}

// Writes the archive's manifest and the per-minor alias a downloader that
// only knows the minor asks for first.
export function writeArchiveManifests(archivesDir: string, manifest: ArchiveManifest): string[] {
  const text = `${JSON.stringify(manifest, null, 2)}\n`
  const written: string[] = []
  for (const key of [manifest.version, manifest.minor]) {
    const path = join(archivesDir, archiveManifestName(key, manifest.platform))
    const tmp = `${path}.partial-${process.pid}`
    writeFileSync(tmp, text)
    renameSync(tmp, path)
    written.push(path)
  }
  return written
}

export function archiveFileFor(archivesDir: string, version: string, platform: string): string {
  return join(archivesDir, archiveName(version, platform))
}

// Unpacks with the system tar into intoDir (which must exist). A truncated
// or corrupt archive fails here with tar's own words.
export async function unpackArchive(file: string, intoDir: string, where = file): Promise<void> {
  try {
    await run('tar', ['-xzf', file, '-C', intoDir, '--no-same-owner'], { code: 'dist.archive' })
  } catch (err) {
    throw new VisError(
      'dist.archive',
      `could not unpack the archive from ${where}: ${(err as Error).message}`,
      {
        url: where,
        path: file,
      },
    )
  }
}
