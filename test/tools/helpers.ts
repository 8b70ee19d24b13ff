import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after } from 'node:test'
import { PathGuard } from '../../src/tools/fs/paths.js'
import { SessionResources } from '../../src/tools/resources.js'
import type { Json, Tool, ToolContext } from '../../src/tools/types.js'

const made: string[] = []
after(async () => {
  for (const d of made) await rm(d, { recursive: true, force: true })
})

// A fresh temp directory (real path), removed when the file's tests end.
export async function tempDir(prefix = 'vis-tools-'): Promise<string> {
  const d = await realpath(await mkdtemp(join(tmpdir(), prefix)))
  made.push(d)
  return d
}

process.env.VIS_HOME ??= join(tmpdir(), `vis-home-tools-${process.pid}`)

export async function files(root: string, tree: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(tree)) {
    const p = join(root, rel)
    await mkdir(dirname(p), { recursive: true })
    await writeFile(p, text)
  }
}

export async function link(target: string, at: string): Promise<void> {
  await mkdir(dirname(at), { recursive: true })
  await symlink(target, at)
}

export function context(
  roots: string[],
): ToolContext & { resources: SessionResources; abort: AbortController } {
  const abort = new AbortController()
  return { sessionId: 'test-session', roots, signal: abort.signal, resources: new SessionResources(), abort }
}

export function guardFor(roots: string[]): PathGuard {
  return new PathGuard(roots, 'test-session')
}

export type Obj = { [key: string]: any }

export async function call(tool: Tool, ctx: ToolContext, ...args: unknown[]): Promise<Obj> {
  const r = await tool.run(args, ctx)
  // Results must survive the JSON wire unchanged.
  assertJson(r)
  return r as Obj
}

function assertJson(v: Json): void {
  const again = JSON.parse(JSON.stringify(v))
  if (JSON.stringify(again) !== JSON.stringify(v)) throw new Error('tool result is not plain JSON')
}

// Resolves to the rejection, or throws when the promise resolved.
export async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p
  } catch (err) {
    return err
  }
  throw new Error('expected the call to fail')
}
