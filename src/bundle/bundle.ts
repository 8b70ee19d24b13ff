// `vis bundle`: an offline install kit for one platform. The package tarball with its
// prebuilds, an npm cache with every dependency, the CPython archives with their manifests
// (a file:// release location), a README saying how to install, and bundle.json naming
// every file's sha256. Built in a temp dir beside DIR and renamed in whole.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { packTree, sha256File, writeArchiveManifests } from '../distribution/archive.js'
import { renameIntoPlace, siblingTemp } from '../distribution/atomic.js'
import { archiveManifestName, archiveName } from '../distribution/layout.js'
import { type ArchiveManifest, parseArchiveManifest } from '../distribution/manifest.js'
import { hostTarget, isSupportedMinor, type Target, targetFor } from '../distribution/platform.js'
import { noProgress, type OnProgress } from '../distribution/progress.js'
import { type ResolvedDistribution, resolveDistribution } from '../distribution/resolve.js'
import { VisError } from '../util/errors.js'
import { packageRoot } from '../util/home.js'
import { BUNDLE_MANIFEST, type BundleManifest, hashFiles } from './manifest.js'
import { type CarriedBinary, carryNativeDeps } from './native-deps.js'
import { fillCache, packPackage } from './npm.js'
import { checkTarballPrebuilds } from './tarball.js'
import { KIT_VERIFIER } from './verify-kit.js'

export type BundleOptions = {
  minors: string[]
  out: string
  // cpython-dist/archives (or any release directory) holding the staged archives.
  archives: string
  // An already packed tarball; default: `npm pack` of this package.
  tarball?: string
  // The platform the kit installs on (`--platform linux-aarch64-gnu`); default this machine's.
  platform?: string
  onProgress?: OnProgress
}

// The largest compressed CPython archive a bundle accepts per minor.
export const MAX_ARCHIVE_BYTES = 15 * 1024 * 1024

export async function makeBundle(opts: BundleOptions): Promise<BundleManifest> {
  const onProgress = opts.onProgress ?? noProgress
  const out = resolve(opts.out)
  const target: Target = opts.platform ? targetFor(opts.platform) : hostTarget()
  for (const m of opts.minors) {
    if (!isSupportedMinor(m, target))
      throw new VisError(
        'bundle.python',
        `Python ${m} is not supported on ${target.tag}; use ${target.minors.join(', ')}`,
        {
          minor: m,
          platform: target.tag,
        },
      )
  }
  if (existsSync(out) && readdirSync(out).length > 0) {
    throw new VisError('bundle.out', `${out} is not empty; name a new directory for the bundle`, {
      path: out,
    })
  }
  const platform = target.tag
  const foreign = target.tag !== hostTarget().tag
  const tmp = siblingTemp(out)
  try {
    onProgress({ step: 'package', detail: opts.tarball ?? `npm pack ${packageRoot}` })
    let tarball: string
    if (opts.tarball) {
      tarball = basename(opts.tarball)
      copyFileSync(resolve(opts.tarball), join(tmp, tarball))
    } else tarball = await packPackage(packageRoot, tmp)
    const pkg = await checkTarballPrebuilds(join(tmp, tarball), opts.minors, target)

    const python: BundleManifest['python'] = []
    mkdirSync(join(tmp, 'cpython'))
    for (const minor of opts.minors) {
      const { from, ...entry } = await bundleArchive(
        opts.archives,
        minor,
        platform,
        join(tmp, 'cpython'),
        foreign,
      )
      onProgress({ step: 'cpython', detail: `Python ${entry.version} from ${from}` })
      python.push(entry)
    }

    onProgress({ step: 'npm', detail: 'collecting every dependency into npm-cache/' })
    let carried: CarriedBinary[] = []
    await fillCache(join(tmp, tarball), join(tmp, 'npm-cache'), async (project) => {
      carried = await carryNativeDeps(project, join(tmp, 'npm-cache'), foreign ? target : undefined)
    })
    for (const c of carried) onProgress({ step: 'npm', detail: `carrying ${c.name} ${c.version}'s binary` })

    writeFileSync(join(tmp, 'README.txt'), readme(pkg.version, tarball, platform, opts.minors, carried))
    // The kit checks itself with Node alone, before anything is installed (never `npx vis`, which
    // would fetch whatever the registry calls `vis`): the compiled verify-kit module.
    copyFileSync(join(packageRoot, 'dist', 'bundle', 'verify-kit.js'), join(tmp, KIT_VERIFIER))
    onProgress({ step: 'manifest', detail: 'hashing every file' })
    const manifest: BundleManifest = {
      format: 1,
      package: { name: pkg.name, version: pkg.version, tarball },
      platform,
      python,
      created: new Date().toISOString(),
      files: await hashFiles(tmp),
    }
    writeFileSync(join(tmp, BUNDLE_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
    // rename(2) replaces an empty directory; a non-empty one means someone else wrote there.
    if (renameIntoPlace(tmp, out) === 'exists')
      throw new VisError('bundle.out', `${out} appeared while bundling; name a new directory`, { path: out })
    return manifest
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true })
    throw err
  }
}

// Copies the per-minor manifest (and the archive it names) after checking the archive's
// sha256 and size, so a bundle never carries what fetch would later refuse; with no staged
// archive, packs the tree this machine resolves for the minor.
export async function bundleArchive(
  archives: string,
  minor: string,
  platform: string,
  into: string,
  foreign = false,
) {
  const manifestFile = join(archives, archiveManifestName(minor, platform))
  // Another platform's tree is never on this machine in use: only its staged archive will do.
  if (!existsSync(manifestFile) && foreign)
    throw new VisError(
      'bundle.python',
      `no CPython ${minor} archive for ${platform} at ${manifestFile}; stage it first (\`vis runtime stage --platform ${platform} --python ${minor}\`)`,
      { path: manifestFile, minor, platform },
    )
  if (!existsSync(manifestFile)) return packInstalled(minor, platform, into, manifestFile)
  const m = parseArchiveManifest(readFileSync(manifestFile, 'utf8'), manifestFile)
  const archive = join(archives, m.file)
  const actual = existsSync(archive) ? await sha256File(archive) : undefined
  if (actual !== m.sha256) {
    throw new VisError(
      'bundle.python',
      `${archive} ${actual ? `has sha256 ${actual}, but ${manifestFile} says ${m.sha256}` : 'is missing'}; ` +
        `stage it again: \`vis runtime stage --python ${minor} --force\``,
      { path: archive, minor },
    )
  }
  if (m.size > MAX_ARCHIVE_BYTES) {
    throw new VisError(
      'bundle.python',
      `${archive} is ${(m.size / 1048576).toFixed(1)} MB; a bundle takes at most ${MAX_ARCHIVE_BYTES / 1048576} MB per minor`,
      { path: archive, minor },
    )
  }
  copyFileSync(archive, join(into, m.file))
  writeArchiveManifests(into, m)
  // from: where it came from, for the progress line (a staged archive, or a tree packed below).
  return { minor, version: m.version, archive: `cpython/${m.file}`, from: archive }
}

// No staged archive (an installed package has none): pack the tree this machine already
// uses for the minor (the per-user cache, say) into the bundle instead.
async function packInstalled(minor: string, platform: string, into: string, looked: string) {
  let tree: ResolvedDistribution
  try {
    tree = await resolveDistribution({ minor, allowDownload: false })
  } catch {
    throw new VisError(
      'bundle.python',
      `no CPython ${minor} archive manifest at ${looked} and no CPython ${minor} on this machine; ` +
        `stage it (\`vis runtime stage --python ${minor}\`) or fetch it (\`vis runtime fetch --python ${minor}\`) first`,
      { path: looked, minor },
    )
  }
  if (tree.kind !== 'install') {
    throw new VisError(
      'bundle.python',
      `CPython ${minor} here is a source checkout (${tree.root}); stage it first`,
      {
        path: tree.root,
        minor,
      },
    )
  }
  const file = join(into, archiveName(tree.version, platform))
  const { sha256, size } = await packTree(tree.root, file)
  const m: ArchiveManifest = {
    version: tree.version,
    minor,
    platform,
    file: basename(file),
    sha256,
    size,
    packages: tree.manifest.packages,
  }
  if (size > MAX_ARCHIVE_BYTES) {
    throw new VisError(
      'bundle.python',
      `CPython ${minor} from ${tree.root} packs to ${(size / 1048576).toFixed(1)} MB; a bundle takes at most ${MAX_ARCHIVE_BYTES / 1048576} MB per minor (stage a slim tree with \`vis runtime stage\`)`,
      { path: tree.root, minor },
    )
  }
  writeArchiveManifests(into, m)
  return {
    minor,
    version: m.version,
    archive: `cpython/${m.file}`,
    from: `${tree.root} (packed: no staged archive)`,
  }
}

function readme(
  version: string,
  tarball: string,
  platform: string,
  minors: string[],
  carried: CarriedBinary[],
): string {
  const native = carried.length
    ? `${carried.map((c) => `${c.name} ${c.version}`).join(', ')} is carried prebuilt for Node ${process.versions.node.split('.')[0]} (ABI ${process.versions.modules});\non another Node it compiles itself, which needs a compiler.`
    : 'better-sqlite3 (a dependency) compiles itself when its prebuilt binary cannot be downloaded:\non a machine with neither, install it from the same cache first where a compiler is present.'
  const first = minors[0]
  return `vis-runtime ${version}: offline bundle for ${platform} (Node 20+, glibc), Python ${minors.join(', ')}.

Needs no network and no compiler. System prerequisite (Debian/Ubuntu): sudo apt-get install -y bubblewrap

On read-only media (a DVD, a read-only mount)? Copy this whole directory to a writable disk first and
use the copy: npm writes into the bundle's npm-cache/ while it installs from it.

  cp -r /media/path/to/this/bundle ~/vis-bundle

B is this directory (or the copy). Check it with Node alone, before installing anything:

  B=/path/to/this/bundle
  node "$B/${KIT_VERIFIER}"

Then install, from the project that should use it:

  npm install --offline --cache "$B/npm-cache" "$B/${tarball}"
  VIS_PYTHON_DIST_URL="file://$B/cpython" npx vis runtime fetch --python ${first}

Repeat the last line for ${minors.join(', ')} as needed (or keep VIS_PYTHON_DIST_URL set and
CPython is unpacked on first use). After the install, \`npx vis bundle --verify "$B"\` is the same check;
both allow what npm itself wrote into npm-cache/ (its log, index entries for the content the bundle holds).
bundle.json lists every file with its sha256.
${native}
`
}
