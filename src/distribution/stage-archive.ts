import {
  copyFileSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  rmSync,
  statSync,
} from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { VisError } from '../util/errors.js'
import { archiveFileFor, sha256File, unpackArchive, writeArchiveManifests } from './archive.js'
import { cleanStaleSiblings, renameIntoPlace, replaceInPlace, siblingTemp } from './atomic.js'
import { downloadFile } from './download.js'
import { defaultDistDir, stagedTreeRoot } from './layout.js'
import { openLocalSource } from './local-source.js'
import { writeManifest } from './manifest.js'
import { noProgress } from './progress.js'
import type { StageOptions, StageResult } from './stage.js'
import { validateTree } from './validate.js'

// A local archive is judged where it lies (dist.source-in-root inside a root a sandbox writes: the
// host runs the tree it holds) and read once, through the descriptor that was judged, into the
// staging folder; the unpacking, the checksum and the copy into archives/ all read that private
// copy, so what is recorded is what was unpacked.
async function copyArchive(path: string, into: string): Promise<void> {
  let fd: number
  try {
    fd = openLocalSource(path, path, 'archive')
  } catch (err) {
    if (err instanceof VisError) throw err
    throw new VisError(
      'dist.stage',
      `no archive at ${path}: ${(err as Error).message}`,
      { path },
      { cause: err },
    )
  }
  // The stream closes the descriptor when it ends or fails.
  await pipeline(createReadStream('', { fd }), createWriteStream(into))
}

// Stages from a python-build-standalone style archive (or one of ours):
// unpacked beside its final place, checked, renamed in.
export async function stageFromArchive(source: string, opts: StageOptions = {}): Promise<StageResult> {
  const onProgress = opts.onProgress ?? noProgress
  const out = resolve(opts.out ?? defaultDistDir())
  mkdirSync(out, { recursive: true })
  const work = join(out, 'staging')
  cleanStaleSiblings(work)
  const tmp = siblingTemp(work)
  try {
    let file = source
    if (/^https?:\/\//.test(source)) {
      file = join(tmp, 'archive.tar.gz')
      await downloadFile(source, file, { onProgress })
    } else {
      file = join(tmp, 'archive.tar.gz')
      await copyArchive(resolve(source), file)
    }
    const unpacked = join(tmp, 'tree')
    mkdirSync(unpacked)
    onProgress({ step: 'unpack', detail: source })
    await unpackArchive(file, unpacked, source)
    const treeRoot = join(unpacked, 'python')
    const tree = validateTree(treeRoot, { source: `archive:${source}` })
    const sha256 = await sha256File(file)
    writeManifest(treeRoot, { ...tree.manifest, source: `archive:${source}`, sha256 })
    const finalRoot = stagedTreeRoot(out, tree.minor, tree.platform)
    if (existsSync(finalRoot) && !opts.force) {
      throw new VisError('dist.stage', `${finalRoot} already exists; pass --force to replace it`, {
        path: finalRoot,
      })
    }
    mkdirSync(join(out, tree.minor, tree.platform), { recursive: true })
    const result: StageResult = {
      root: finalRoot,
      version: tree.version,
      minor: tree.minor,
      platform: tree.platform,
      skipped: false,
      sha256,
    }
    if (opts.archive !== false) {
      const archivesDir = join(out, 'archives')
      mkdirSync(archivesDir, { recursive: true })
      const dest = archiveFileFor(archivesDir, tree.version, tree.platform)
      copyFileSync(file, dest)
      writeArchiveManifests(archivesDir, {
        version: tree.version,
        minor: tree.minor,
        platform: tree.platform,
        file: basename(dest),
        sha256,
        size: statSync(dest).size,
        packages: tree.manifest.packages,
      })
      result.archive = dest
    }
    if (opts.force) replaceInPlace(treeRoot, finalRoot)
    else if (renameIntoPlace(treeRoot, finalRoot) === 'exists') {
      throw new VisError('dist.stage', `${finalRoot} appeared while staging; pass --force to replace it`, {
        path: finalRoot,
      })
    }
    onProgress({ step: 'stage', detail: `staged Python ${tree.version} at ${finalRoot}` })
    return result
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}
