import { accessSync, constants as C, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { packageRoot } from '../../util/home.js'

// The tools run in the host, which has no Python of its own; syntax checks
// of Python files borrow an interpreter. Order: explicit override, the
// distribution resolver (when src/distribution provides one), a tree staged
// beside the package, then the development machine's pyenv build.
let cached: Promise<string | undefined> | undefined

function executable(p: string | undefined): string | undefined {
  if (!p) return undefined
  try {
    accessSync(p, C.X_OK)
    return p
  } catch {
    return undefined
  }
}

async function fromResolver(): Promise<string | undefined> {
  // Loaded by name at run time: the resolver is another module's work and may not exist yet.
  const spec = '../../distribution/resolve.js'
  try {
    const mod = (await import(spec)) as { resolveDistribution?: () => unknown }
    if (typeof mod.resolveDistribution !== 'function') return undefined
    const d = (await mod.resolveDistribution()) as {
      executable?: string
      paths?: { executable?: string }
      root?: string
      minor?: string
    }
    return (
      executable(d?.executable) ??
      executable(d?.paths?.executable) ??
      (d?.root && d.minor ? executable(join(d.root, 'bin', `python${d.minor}`)) : undefined)
    )
  } catch {
    return undefined
  }
}

function staged(): string | undefined {
  const dist = join(packageRoot, 'cpython-dist')
  let minors: string[] = []
  try {
    minors = readdirSync(dist).filter((n) => /^3\.\d+$/.test(n))
  } catch {
    return undefined
  }
  for (const minor of minors.sort()) {
    const p = executable(join(dist, minor, 'linux-x86_64-gnu', 'python', 'bin', `python${minor}`))
    if (p) return p
  }
  return undefined
}

export function findHostPython(): Promise<string | undefined> {
  cached ??= (async () =>
    executable(process.env.VIS_TOOLS_PYTHON) ??
    (await fromResolver()) ??
    staged() ??
    executable('/root/.pyenv/versions/3.11.7/bin/python3.11'))()
  return cached
}
