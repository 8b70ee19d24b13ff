import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { VisError } from '../util/errors.js'
import { unpackArchive } from './archive.js'
import { cleanStaleSiblings, renameIntoPlace, replaceInPlace, siblingTemp } from './atomic.js'
import { downloadDeadline, downloadFile, fetchText } from './download.js'
import { cacheRoot } from './layout.js'
import { parseArchiveManifest, writeManifest } from './manifest.js'
import { platformTag } from './platform.js'
import { noProgress, type OnProgress } from './progress.js'
import { type ValidTree, validateTree } from './validate.js'

export type FetchOptions = {
  onProgress?: OnProgress
  retries?: number
  // Replace a valid cached tree instead of keeping it.
  replace?: boolean
  // When it must have finished (Date.now() ms); default downloadDeadline() from the start.
  deadline?: number
}

// Fetches <base>/cpython-<minor>-<platform>.json, then the archive it names;
// checks the sha256, unpacks beside the cache path and renames into place.
export async function fetchIntoCache(
  minor: string,
  base: string,
  opts: FetchOptions = {},
): Promise<ValidTree> {
  const onProgress = opts.onProgress ?? noProgress
  const deadline = opts.deadline ?? downloadDeadline()
  const platform = platformTag()
  const manifestUrl = `${base}/cpython-${minor}-${platform}.json`
  onProgress({ step: 'manifest', detail: manifestUrl })
  const manifest = parseArchiveManifest(
    await fetchText(manifestUrl, { retries: opts.retries, onProgress, deadline }),
    manifestUrl,
  )
  if (manifest.minor !== minor || manifest.platform !== platform) {
    throw new VisError(
      'dist.manifest',
      `${manifestUrl} describes ${manifest.version} for ${manifest.platform}, not ${minor} for ${platform}`,
      { url: manifestUrl },
    )
  }
  const archiveUrl = new URL(manifest.file, `${base}/`).toString()
  const final = cacheRoot(minor, platform)
  mkdirSync(dirname(final), { recursive: true })
  cleanStaleSiblings(final)
  const tmp = siblingTemp(final)
  try {
    const file = join(tmp, manifest.file)
    const actual = await downloadFile(archiveUrl, file, { onProgress, retries: opts.retries, deadline })
    if (actual !== manifest.sha256) {
      throw new VisError(
        'dist.checksum',
        `checksum mismatch for ${archiveUrl}: ${manifestUrl} says sha256 ${manifest.sha256}, the file has ${actual}. ` +
          'The archive or its manifest was damaged or replaced; publish them again together ' +
          '(`vis runtime stage` or `vis bundle` writes both), then run `vis runtime fetch` again. Nothing was installed.',
        { url: archiveUrl, expected: manifest.sha256, actual },
      )
    }
    onProgress({ step: 'unpack', detail: final })
    const into = join(tmp, 'tree')
    mkdirSync(into)
    await unpackArchive(file, into, archiveUrl)
    rmSync(file)
    const treeRoot = join(into, 'python')
    const tree = validateTree(treeRoot, { minor, source: `download:${archiveUrl}` })
    if (tree.version !== manifest.version) {
      throw new VisError(
        'dist.archive',
        `${archiveUrl} holds ${tree.version}, its manifest says ${manifest.version}`,
        {
          url: archiveUrl,
        },
      )
    }
    writeManifest(treeRoot, { ...tree.manifest, source: `download:${archiveUrl}`, sha256: actual })
    moveBrokenAside(final)
    if (opts.replace) replaceInPlace(treeRoot, final)
    else if (renameIntoPlace(treeRoot, final) === 'exists') {
      // Another process won the race; its tree is as good as ours.
      onProgress({ step: 'install', detail: `another process installed ${final} first` })
    }
    return validateTree(final, { minor })
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

// A cache entry that fails validation (say, someone deleted files in it) must
// not block a fresh install at the same path.
function moveBrokenAside(final: string): void {
  if (!existsSync(final)) return
  try {
    validateTree(final)
    return
  } catch {
    const aside = siblingTemp(final, 'old')
    rmSync(aside, { recursive: true })
    renameSync(final, aside)
    rmSync(aside, { recursive: true, force: true })
  }
}
