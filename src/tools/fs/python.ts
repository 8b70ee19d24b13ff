import { accessSync, constants as C } from 'node:fs'
import { resolveDistribution } from '../../distribution/resolve.js'

// The tools run in the host, which has no Python of its own; syntax checks
// of Python files borrow an interpreter: an explicit override, else the
// distribution the runtime itself resolves (never downloading for this).
// Nothing else: a fixed path (a development machine's pyenv build once stood here) could lie in a
// session root (/root/.pyenv under a root at /root) and run what a sandbox put there.
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

async function fromDistribution(): Promise<string | undefined> {
  try {
    return executable((await resolveDistribution({ allowDownload: false })).executable)
  } catch {
    return undefined
  }
}

export function findHostPython(): Promise<string | undefined> {
  cached ??= (async () => executable(process.env.VIS_TOOLS_PYTHON) ?? (await fromDistribution()))()
  return cached
}
