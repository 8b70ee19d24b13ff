import { createHash } from 'node:crypto'
import { createReadStream, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { VisError } from '../util/errors.js'
import { archiveManifestName, archiveName } from './layout.js'
import type { ArchiveManifest } from './manifest.js'

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

// Packs treeDir as a top-level `python/` directory (the install_only layout),
// whatever treeDir is called on disk, so a tree still in its temp dir can be
// archived before it is renamed into place. node-tar, not the system tar: a
// consumer's machine is not assumed to have one. Owners are left out (portable).
export async function packTree(treeDir: string, outFile: string): Promise<{ sha256: string; size: number }> {
  const partial = `${outFile}.partial-${process.pid}`
  const name = basename(treeDir)
  const { create } = await import('tar')
  try {
    await create(
      {
        file: partial,
        cwd: dirname(treeDir),
        gzip: true,
        portable: true,
        strict: true,
        onWriteEntry(entry) {
          if (name !== 'python' && (entry.path === name || entry.path.startsWith(`${name}/`)))
            entry.path = `python${entry.path.slice(name.length)}`
        },
      },
      [name],
    )
    renameSync(partial, outFile)
  } catch (err) {
    rmSync(partial, { force: true })
    throw new VisError(
      'dist.archive',
      `could not pack ${treeDir} into ${outFile}: ${(err as Error).message}`,
      {
        path: treeDir,
      },
    )
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

// Unpacks with node-tar into intoDir (which must exist). strict: a truncated or
// corrupt archive (bad gzip, bad header) fails instead of leaving half a tree; entries
// that would land outside intoDir (absolute, `..`, through a symlink) are refused.
export async function unpackArchive(file: string, intoDir: string, where = file): Promise<void> {
  const { extract } = await import('tar')
  try {
    await extract({ file, cwd: intoDir, strict: true, preserveOwner: false })
  } catch (err) {
    throw new VisError(
      'dist.archive',
      `the archive ${where} is corrupt or truncated (${(err as Error).message}); ` +
        'delete it and download or stage it again (its sha256 must match its manifest)',
      { url: where, path: file },
    )
  }
}
