import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { agentPlaces, skillPlaces } from '../skills/places.js'
import type { Listed } from '../skills/prompt-section.js'
import type { PromptPolicy, ToolSpec } from './prompt.js'

// The parts of a session's system prompt that only a started session knows (its bound tools,
// with extensions' and MCP servers' ones; the skills and agents found; extensions' fragments),
// kept per project under the vis home so `vis run` can send its first model request while its
// session starts (issue 32 §2). Project instructions (AGENTS.md) are never cached: they are
// read afresh for every prompt. The session's own prompt is compared with the one sent, and a
// request sent from a stale cache is not used (src/agent/host.ts).

export type PromptParts = {
  policy: PromptPolicy
  tools: ToolSpec[]
  fragments: { name: string; text: string }[]
  skills: Listed[]
  agents: Listed[]
}

// What the parts are for: the session a command is about to make.
export type PromptCacheKey = {
  version: string
  roots: string[]
  mode: string
  shell: boolean
  network: boolean
  toolCalling: boolean
}

type Stored = { key: PromptCacheKey; inputs: string; parts: PromptParts }

const MAX_CACHE_BYTES = 4 * 1024 * 1024
const dirOf = (home: string) => join(home, 'cache', 'first-prompt')
const digest = (s: string) => createHash('sha256').update(s).digest('hex')
const fileOf = (home: string, key: PromptCacheKey) =>
  join(dirOf(home), `${digest(JSON.stringify(key)).slice(0, 32)}.json`)

// A stamp of a file or folder: identity, size and times (an edit in place changes mtime).
function stamp(path: string): string {
  try {
    const st = statSync(path)
    return `${path}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`
  } catch {
    return `${path}:-`
  }
}

// A folder, and each entry in it with the file the entry is known by (SKILL.md,
// extension.py): editing one changes the stamps though the folder's own do not change.
function folderStamps(dir: string, inner: readonly string[]): string[] {
  const out = [stamp(dir)]
  let names: string[]
  try {
    names = readdirSync(dir).sort()
  } catch {
    return out
  }
  for (const n of names.slice(0, 512)) {
    out.push(stamp(join(dir, n)))
    for (const f of inner) out.push(stamp(join(dir, n, f)))
  }
  return out
}

// What the cached parts were made from, besides the key: the home's agent.json and mcp.json,
// the home's and the project's extensions, and every place skills and agents are found. The
// stamps are hashed; a different hash is a stale cache.
export function promptInputs(home: string, roots: readonly string[]): string {
  const places = { roots, visHome: home, userHome: homedir() }
  const stamps = [
    stamp(join(home, 'agent.json')),
    stamp(join(home, 'mcp.json')),
    ...folderStamps(join(home, 'extensions'), ['extension.py']),
    ...roots.flatMap((r) => folderStamps(join(r, '.vis', 'extensions'), ['extension.py'])),
    ...skillPlaces(places).flatMap((p) => folderStamps(p.dir, ['SKILL.md'])),
    ...agentPlaces(places).flatMap((p) => folderStamps(p.dir, [])),
  ]
  return digest(stamps.join('\n'))
}

// The parts for this key, unless absent, unreadable, or made from other inputs.
export function readPromptCache(home: string, key: PromptCacheKey): PromptParts | undefined {
  try {
    const path = fileOf(home, key)
    if (statSync(path).size > MAX_CACHE_BYTES) return undefined
    const stored = JSON.parse(readFileSync(path, 'utf8')) as Stored
    if (JSON.stringify(stored.key) !== JSON.stringify(key)) return undefined
    if (stored.inputs !== promptInputs(home, key.roots)) return undefined
    return stored.parts
  } catch {
    return undefined
  }
}

// Best effort: a home that cannot be written only costs the early request next time. Written
// whole (a temporary file renamed over), so a reader never sees half of it.
export function writePromptCache(home: string, key: PromptCacheKey, parts: PromptParts): void {
  try {
    const dir = dirOf(home)
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const path = fileOf(home, key)
    const body = JSON.stringify({ key, inputs: promptInputs(home, key.roots), parts } satisfies Stored)
    try {
      if (readFileSync(path, 'utf8') === body) return
    } catch {}
    const tmp = `${path}.${process.pid}.tmp`
    writeFileSync(tmp, body, { mode: 0o600 })
    renameSync(tmp, path)
  } catch {}
}
