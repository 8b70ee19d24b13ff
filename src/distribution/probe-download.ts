import { errorMessage } from '../util/errors.js'
import { fetchText } from './download.js'
import { archiveManifestName } from './layout.js'
import { type ArchiveManifest, parseArchiveManifest } from './manifest.js'
import { platformTag } from './platform.js'

export type DownloadProbe =
  | { url: string; ok: true; manifest: ArchiveManifest; ms: number }
  | { url: string; ok: false; reason: string; ms: number }

// `vis doctor`'s question about the first-use download: does the release location answer for
// this minor, and how big is what it would send? One request for the small manifest, bounded
// as a whole (connect, headers and body) and not retried, never the archive itself.
export async function probeDownload(minor: string, base: string, timeoutMs = 5000): Promise<DownloadProbe> {
  const url = `${base}/${archiveManifestName(minor, platformTag())}`
  const t0 = Date.now()
  try {
    const text = await fetchText(url, { retries: 0, attemptTimeoutMs: timeoutMs })
    return { url, ok: true, manifest: parseArchiveManifest(text, url), ms: Date.now() - t0 }
  } catch (err) {
    return { url, ok: false, reason: errorMessage(err), ms: Date.now() - t0 }
  }
}
