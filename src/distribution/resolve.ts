import { existsSync } from 'node:fs'
import { join, resolve as resolvePath } from 'node:path'
import { z } from 'zod'
import { isVisError, VisError } from '../util/errors.js'
import { packageRoot, visHome } from '../util/home.js'
import { openHome } from '../util/home-guard.js'
import { validateBuildTree } from './checkout.js'
import { cacheRoot, stagedMinors, stagedTreeRoot, treePaths } from './layout.js'
import type { DistManifest } from './manifest.js'
import { isSupportedMinor, platformTag, SUPPORTED_MINORS } from './platform.js'
import { type OnProgress, progressPrinter } from './progress.js'
import { type ValidTree, validateTree } from './validate.js'

// Where release archives are published: <base>/cpython-<minor>-<platform>.json
// names the archive (same base) and its sha256.
export const DEFAULT_DIST_URL = 'https://github.com/vis-runtime/cpython-dist/releases/latest/download'

export const SOURCES = ['env', 'staged', 'checkout', 'cache', 'download'] as const
export type DistSource = (typeof SOURCES)[number]

export type ResolvedDistribution = {
  root: string
  version: string
  minor: string
  platform: string
  source: DistSource
  libpython: string
  executable: string
  include: string
  // 'install': install_only layout, PyConfig.home = root.
  // 'build-tree': a CPython checkout built in place, PyConfig.executable only.
  kind: 'install' | 'build-tree'
  includeDirs: string[]
  stdlib: string
  libDynload: string
  manifest: DistManifest
}

export type ResolveOptions = {
  minor?: string
  allowDownload?: boolean
  onProgress?: OnProgress
  env?: NodeJS.ProcessEnv
  // Overrides for where staged trees live (default <package>/cpython-dist).
  stagedDir?: string
  retries?: number
}

export type SourceReport = { source: DistSource; answered: boolean; reason: string; where?: string }

export type Explanation = {
  minor: string
  platform: string
  resolved?: ResolvedDistribution
  error?: { code: string; message: string }
  sources: SourceReport[]
}

const EnvSchema = z.object({
  VIS_PYTHON_HOME: z.string().min(1).optional(),
  VIS_PYTHON_VERSION: z
    .string()
    .regex(/^\d+\.\d+$/, 'VIS_PYTHON_VERSION must be a minor such as 3.11')
    .optional(),
  VIS_PYTHON_CHECKOUT: z.string().min(1).optional(),
  VIS_PYTHON_STAGED_DIR: z.string().min(1).optional(),
  VIS_PYTHON_DIST_URL: z.string().url().optional(),
})
type VisEnv = z.infer<typeof EnvSchema>

function readEnv(env: NodeJS.ProcessEnv): VisEnv {
  const picked = Object.fromEntries(
    Object.keys(EnvSchema.shape).flatMap((k) => (env[k] ? [[k, env[k]]] : [])),
  )
  const parsed = EnvSchema.safeParse(picked)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new VisError('dist.env', `${issue.path.join('.')}: ${issue.message}`, {})
  }
  return parsed.data
}

export function stagedDir(opts: ResolveOptions = {}, env = readEnv(opts.env ?? process.env)): string {
  return resolvePath(opts.stagedDir ?? env.VIS_PYTHON_STAGED_DIR ?? join(packageRoot, 'cpython-dist'))
}

// Every place a distribution this host could run lives, existing or not, absolute: the staged
// directory (every minor in it, not only the one resolved so far), the per-user cache, a checkout
// and VIS_PYTHON_HOME. A later `vis python`, a worker of another minor or the trusted extension
// worker runs any of them unconfined, so each is protected as a whole (root-guard.ts).
export function distributionPlaces(env: NodeJS.ProcessEnv = process.env): string[] {
  const named = [env.VIS_PYTHON_STAGED_DIR, env.VIS_PYTHON_CHECKOUT, env.VIS_PYTHON_HOME]
  return [
    stagedDir({ env: {} }),
    join(visHome(), 'python', 'runtime'),
    ...named.filter((v): v is string => v !== undefined && v !== '').map((v) => resolvePath(v)),
  ]
}

export function distBaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (readEnv(env).VIS_PYTHON_DIST_URL ?? DEFAULT_DIST_URL).replace(/\/+$/, '')
}

// explicit option > VIS_PYTHON_VERSION > the lowest staged minor > 3.11.
export function selectMinor(opts: ResolveOptions = {}): string {
  const env = readEnv(opts.env ?? process.env)
  const minor =
    opts.minor ?? env.VIS_PYTHON_VERSION ?? stagedMinors(stagedDir(opts, env))[0] ?? SUPPORTED_MINORS[0]
  if (!isSupportedMinor(minor)) {
    throw new VisError(
      'dist.version',
      `Python ${minor} is not supported; use one of ${SUPPORTED_MINORS.join(', ')}`,
      {
        minor,
      },
    )
  }
  return minor
}

// Asked for by the caller or the environment, rather than defaulted.
function minorIsExplicit(opts: ResolveOptions): boolean {
  return opts.minor !== undefined || readEnv(opts.env ?? process.env).VIS_PYTHON_VERSION !== undefined
}

function fromInstall(tree: ValidTree, source: DistSource): ResolvedDistribution {
  const p = treePaths(tree.root, tree.minor)
  return {
    ...tree,
    source,
    kind: 'install',
    includeDirs: [tree.include],
    stdlib: p.stdlib,
    libDynload: p.libDynload,
  }
}

// VIS_PYTHON_HOME may name the python/ directory itself or the directory
// holding it (an unpacked archive).
function envRoot(home: string): string {
  const abs = resolvePath(home)
  if (!existsSync(join(abs, 'lib')) && existsSync(join(abs, 'python', 'lib'))) return join(abs, 'python')
  return abs
}

type Attempt = { report: SourceReport; dist?: ResolvedDistribution }

// The sources that never touch the network, in order. Stops at the first
// that answers. An explicit VIS_PYTHON_HOME or VIS_PYTHON_CHECKOUT that is
// broken is an error, not a silent fall-through.
function localAttempts(minor: string, explicitMinor: boolean, opts: ResolveOptions): Attempt[] {
  const env = readEnv(opts.env ?? process.env)
  const platform = platformTag()
  const out: Attempt[] = []

  if (!env.VIS_PYTHON_HOME) {
    out.push({ report: { source: 'env', answered: false, reason: 'VIS_PYTHON_HOME is not set' } })
  } else {
    const root = envRoot(env.VIS_PYTHON_HOME)
    const tree = validateTree(root, { source: `env:${root}` })
    if (explicitMinor && tree.minor !== minor) {
      out.push({
        report: {
          source: 'env',
          answered: false,
          where: root,
          reason: `VIS_PYTHON_HOME holds Python ${tree.version}, but ${minor} was asked for`,
        },
      })
    } else {
      out.push({
        report: {
          source: 'env',
          answered: true,
          where: root,
          reason: `VIS_PYTHON_HOME=${env.VIS_PYTHON_HOME}`,
        },
        dist: fromInstall(tree, 'env'),
      })
      return out
    }
  }

  const staged = stagedTreeRoot(stagedDir(opts, env), minor, platform)
  if (!existsSync(staged)) {
    out.push({
      report: { source: 'staged', answered: false, where: staged, reason: `nothing staged at ${staged}` },
    })
  } else {
    try {
      const tree = validateTree(staged, { minor })
      out.push({
        report: { source: 'staged', answered: true, where: staged, reason: `staged beside the package` },
        dist: fromInstall(tree, 'staged'),
      })
      return out
    } catch (err) {
      out.push({
        report: { source: 'staged', answered: false, where: staged, reason: (err as Error).message },
      })
    }
  }

  if (!env.VIS_PYTHON_CHECKOUT) {
    out.push({ report: { source: 'checkout', answered: false, reason: 'VIS_PYTHON_CHECKOUT is not set' } })
  } else {
    const root = resolvePath(env.VIS_PYTHON_CHECKOUT)
    const tree = validateBuildTree(root)
    if (tree.minor !== minor) {
      out.push({
        report: {
          source: 'checkout',
          answered: false,
          where: root,
          reason: `VIS_PYTHON_CHECKOUT is Python ${tree.version}, but ${minor} was asked for`,
        },
      })
    } else {
      out.push({
        report: { source: 'checkout', answered: true, where: root, reason: `VIS_PYTHON_CHECKOUT=${root}` },
        dist: { ...tree, source: 'checkout', kind: 'build-tree' },
      })
      return out
    }
  }

  // The cache (and a download into it) lives in the vis home: only a home no live sandbox writes
  // (util/home-guard.ts), or a tree a session planted there would run on the host.
  openHome(undefined, 'dist.cache')
  const cached = cacheRoot(minor, platform)
  if (!existsSync(cached)) {
    out.push({
      report: { source: 'cache', answered: false, where: cached, reason: `nothing cached at ${cached}` },
    })
  } else {
    try {
      const tree = validateTree(cached, { minor })
      out.push({
        report: { source: 'cache', answered: true, where: cached, reason: 'the per-user cache' },
        dist: fromInstall(tree, 'cache'),
      })
      return out
    } catch (err) {
      out.push({
        report: { source: 'cache', answered: false, where: cached, reason: (err as Error).message },
      })
    }
  }
  return out
}

function notFound(minor: string, reasons: SourceReport[], extra?: string, url?: string): VisError {
  const lines = reasons.map((r) => `  ${r.source}: ${r.reason}`).join('\n')
  return new VisError(
    'dist.not-found',
    `no CPython ${minor} distribution is available.\n${lines}${extra ? `\n  download: ${extra}` : ''}\n` +
      `Set VIS_PYTHON_HOME to a distribution root, or stage one with \`vis runtime stage --python ${minor}\`` +
      ` (or fetch it with \`vis runtime fetch --python ${minor}\` when online). Offline, set` +
      ' VIS_PYTHON_DIST_URL=file://DIR/cpython, the cpython/ of a `vis bundle` DIR made on a connected machine.',
    { minor, url },
  )
}

export async function resolveDistribution(opts: ResolveOptions = {}): Promise<ResolvedDistribution> {
  const explicitMinor = minorIsExplicit(opts)
  const minor = selectMinor(opts)
  const attempts = localAttempts(minor, explicitMinor, opts)
  const hit = attempts.find((a) => a.dist)
  if (hit?.dist) return hit.dist
  const reports = attempts.map((a) => a.report)
  if (opts.allowDownload === false) throw notFound(minor, reports, 'not allowed by the caller')
  const base = distBaseUrl(opts.env ?? process.env)
  try {
    // Unless the caller listens itself, the first use says what it is waiting for: a bar with
    // the rate at a terminal, lines in a log, and each retry as it happens.
    const onProgress = opts.onProgress ?? progressPrinter()
    onProgress({
      step: 'first use',
      detail: `CPython ${minor} is not here yet: downloading it from ${base} (gives up after VIS_DOWNLOAD_DEADLINE_S, default 300 s; offline: VIS_PYTHON_DIST_URL=file://DIR/cpython of a \`vis bundle\` DIR)`,
    })
    // Loaded only here: the download and unpack code (crypto, streams, tar) is ~10 ms of
    // module loading that every worker start would pay for a step it never takes.
    const { fetchIntoCache } = await import('./fetch.js')
    const tree = await fetchIntoCache(minor, base, { ...opts, onProgress })
    return fromInstall(tree, 'download')
  } catch (err) {
    if (isVisError(err, 'dist.download')) throw notFound(minor, reports, err.message, err.context.url)
    throw err
  }
}

// Why each source did or did not answer, without downloading anything.
export async function explainResolution(opts: ResolveOptions = {}): Promise<Explanation> {
  return explainLocally(opts)
}

// The same, synchronously: it only reads the local sources (vis doctor's probe is synchronous).
export function explainLocally(opts: ResolveOptions = {}): Explanation {
  const platform = platformTag()
  let minor: string
  try {
    minor = selectMinor(opts)
  } catch (err) {
    const e = err as VisError
    return { minor: opts.minor ?? '?', platform, sources: [], error: { code: e.code, message: e.message } }
  }
  const explicitMinor = minorIsExplicit(opts)
  let attempts: Attempt[]
  try {
    attempts = localAttempts(minor, explicitMinor, opts)
  } catch (err) {
    const e = err as VisError
    return { minor, platform, sources: [], error: { code: e.code ?? 'dist.error', message: e.message } }
  }
  const sources = attempts.map((a) => a.report)
  const hit = attempts.find((a) => a.dist)
  if (hit?.dist) return { minor, platform, resolved: hit.dist, sources }
  const base = distBaseUrl(opts.env ?? process.env)
  const url = `${base}/cpython-${minor}-${platform}.json`
  sources.push({
    source: 'download',
    answered: false,
    where: url,
    reason: `not attempted by status; \`vis runtime fetch --python ${minor}\` would download from ${url}`,
  })
  return { minor, platform, sources }
}
