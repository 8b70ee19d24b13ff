import { parseArgs } from 'node:util'
import { fetchIntoCache } from '../../distribution/fetch.js'
import { cacheRoot } from '../../distribution/layout.js'
import { checkSource, parseWith } from '../../distribution/packages/sets.js'
import { platformTag, targetFor } from '../../distribution/platform.js'
import { progressPrinter } from '../../distribution/progress.js'
import { distBaseUrl, explainResolution, selectMinor } from '../../distribution/resolve.js'
import { type StageResult, stageFromPython, stageMinor } from '../../distribution/stage.js'
import { stageFromArchive } from '../../distribution/stage-archive.js'
import { stageFromDebian } from '../../distribution/stage-debian.js'
import { validateTree } from '../../distribution/validate.js'
import { VisError } from '../../util/errors.js'
import { type Command, subcommands } from '../command.js'

const usage = `Usage: vis runtime <status|fetch|stage> [options]

Find, fetch and stage the CPython distribution the runtime embeds.

  vis runtime status [--python 3.X] [--json]
      Show the distribution that would be used, its version and source, and
      why each earlier source (VIS_PYTHON_HOME, cpython-dist/ beside the
      package, VIS_PYTHON_CHECKOUT, the per-user cache) did not answer.

  vis runtime fetch [--python 3.X] [--force]
      Download the release archive into the per-user cache
      (VIS_HOME/python/runtime/<minor>/<platform>/python) from
      VIS_PYTHON_DIST_URL, checking its sha256.

  vis runtime stage [--python 3.X | --from-python PATH | --from-archive PATH|URL]
                    [--with NAMES] [--index-url URL|DIR] [--out DIR] [--force]
      Build a slim, relocatable tree in cpython-dist/<minor>/<platform>/python
      and its archive in cpython-dist/archives/. --python finds a local
      shared-library CPython (pyenv's, then the system's); default 3.11.
      --with adds packages (comma-separated, repeatable): pytest; the sets
      data (numpy, pandas, matplotlib, pillow), web (requests, httpx, bs4,
      lxml, yaml) and all; or single packages by name (pip gives tool
      processes python3 -m pip). They come from Debian's python3-*
      packages (apt-get download; C extensions for
      Debian's CPython 3.11 only), their shared libraries copied into the
      tree, or, with --index-url, as wheels from that package index or
      directory of .whl files (any minor; pip resolves them).

  vis runtime stage --platform linux-aarch64-gnu [--python 3.11] [--out DIR] [--force]
      Another platform's tree and archive, from Debian's packages for its
      architecture with the shared libraries its modules need (needs
      \`dpkg --add-architecture arm64 && apt-get update\`, qemu-user-static for
      the check, and a local CPython of the same minor to compile .pyc).

Minor selection: --python, else VIS_PYTHON_VERSION, else the lowest staged minor.

Environment:
  VIS_PYTHON_HOME       a distribution root (install_only layout, or a plain
                        shared-library prefix such as pyenv's); answers first
  VIS_PYTHON_STAGED_DIR where staged trees are looked for (default: cpython-dist/
                        beside the package)
  VIS_PYTHON_CHECKOUT   a CPython source tree built in place with
                        \`./configure --enable-shared && make\`
  VIS_PYTHON_DIST_URL   release base URL (https:// or file://, e.g. a bundle's cpython/);
                        serves cpython-<minor>-<platform>.json
                        naming the archive and its sha256
  VIS_HOME              per-user state (default ~/.vis); the cache is
                        VIS_HOME/python/runtime/<minor>/<platform>/python`

async function status(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { python: { type: 'string' }, json: { type: 'boolean', default: false } },
  })
  const ex = await explainResolution({ minor: values.python })
  // --python naming an unsupported minor is a usage error (exit 2); nothing found is 1.
  const failed = values.python !== undefined && ex.error?.code === 'dist.version' ? 2 : 1
  if (values.json) {
    console.log(JSON.stringify(ex, null, 2))
    return ex.resolved ? 0 : failed
  }
  const r = ex.resolved
  if (r) {
    console.log(`Python ${r.version} (${r.platform}) from ${r.source}: ${r.root}`)
    console.log(`  libpython   ${r.libpython}`)
    console.log(`  executable  ${r.executable}`)
    console.log(`  include     ${r.include}`)
    console.log(`  layout      ${r.kind}`)
    console.log(
      `  manifest    source=${r.manifest.source}${r.manifest.sha256 ? ` sha256=${r.manifest.sha256}` : ''}`,
    )
    if (r.manifest.packages.length) console.log(`  packages    ${r.manifest.packages.join(', ')}`)
    if (r.manifest.libraries?.length) console.log(`  libraries   ${r.manifest.libraries.join(', ')}`)
  } else if (ex.error) {
    console.log(`No usable CPython ${ex.minor}: ${ex.error.message} [${ex.error.code}]`)
  } else {
    console.log(`No CPython ${ex.minor} for ${ex.platform} on this machine yet.`)
  }
  if (ex.sources.length) {
    console.log('Sources, in order:')
    for (const s of ex.sources) {
      console.log(`  ${s.source.padEnd(9)} ${s.answered ? 'answered' : 'no      '}  ${s.reason}`)
    }
  }
  // An unsupported minor cannot be staged or fetched either: its error already names the valid ones.
  if (!r && ex.error?.code !== 'dist.version') {
    console.log(
      `Set VIS_PYTHON_HOME, run \`vis runtime stage --python ${ex.minor}\`, or \`vis runtime fetch --python ${ex.minor}\`.`,
    )
  }
  return r ? 0 : failed
}

async function fetch(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { python: { type: 'string' }, force: { type: 'boolean', default: false } },
  })
  const minor = selectMinor({ minor: values.python })
  const root = cacheRoot(minor)
  if (!values.force) {
    try {
      const t = validateTree(root, { minor })
      console.log(`Python ${t.version} is already in the cache: ${root}`)
      return 0
    } catch {
      // Missing or broken: fetch it.
    }
  }
  const tree = await fetchIntoCache(minor, distBaseUrl(), {
    onProgress: progressPrinter(),
    replace: values.force,
  })
  console.log(`Python ${tree.version} is in the cache: ${tree.root}`)
  return 0
}

async function stage(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      python: { type: 'string' },
      'from-python': { type: 'string' },
      'from-archive': { type: 'string' },
      with: { type: 'string', multiple: true, default: [] },
      'index-url': { type: 'string' },
      out: { type: 'string' },
      force: { type: 'boolean', default: false },
      platform: { type: 'string' },
    },
  })
  // Another platform's tree comes from Debian's packages for that architecture (issue 37).
  if (values.platform !== undefined && targetFor(values.platform).tag !== platformTag()) {
    if (values['from-python'] || values['from-archive'] || values.with.length || values['index-url'])
      throw new VisError('dist.stage', '--platform takes only --python, --out and --force', {})
    const r = await stageFromDebian(targetFor(values.platform), {
      minor: values.python,
      out: values.out,
      force: values.force,
      onProgress: progressPrinter(),
    })
    console.log(
      `${r.skipped ? 'Already staged' : 'Staged'}: Python ${r.version} for ${r.platform} at ${r.root}`,
    )
    if (r.archive) console.log(`Archive: ${r.archive} (sha256 ${r.sha256})`)
    return 0
  }
  const selection = parseWith(values.with)
  const hasPackages = selection.packages.length > 0 || selection.extra.length > 0
  checkSource(selection, values['index-url'])
  const picked = [values.python, values['from-python'], values['from-archive']].filter((v) => v !== undefined)
  if (picked.length > 1) {
    throw new VisError('dist.stage', 'give only one of --python, --from-python, --from-archive', {})
  }
  const opts = {
    out: values.out,
    force: values.force,
    withPytest: selection.pytest,
    packages: hasPackages ? selection : undefined,
    indexUrl: values['index-url'],
    onProgress: progressPrinter(),
  }
  let result: StageResult
  if (values['from-archive']) {
    if (opts.withPytest || hasPackages)
      throw new VisError('dist.stage', '--with applies to --python/--from-python only', {})
    result = await stageFromArchive(values['from-archive'], opts)
  } else if (values['from-python']) result = await stageFromPython(values['from-python'], opts)
  else result = await stageMinor(values.python ?? '3.11', opts)
  console.log(`${result.skipped ? 'Already staged' : 'Staged'}: Python ${result.version} at ${result.root}`)
  if (result.archive) console.log(`Archive: ${result.archive} (sha256 ${result.sha256})`)
  return 0
}

export const runtime: Command = {
  name: 'runtime',
  usage,
  run: subcommands('runtime', usage, { status, fetch, stage }),
}
