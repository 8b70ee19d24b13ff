// Several processes ("nodes") on one database at once, for the race tests (nodes.test.ts,
// postgres.test.ts).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

const NODE = join(import.meta.dirname, 'fixtures', 'node-race.ts')

export type Place = { home: string; databaseUrl: string }

// Starts one node per args (fixtures/node-race.ts), releases them together once all have
// loaded, and returns each one's JSON result in order. `home` per node when given, else shared.
export async function race(place: Place, args: string[][], homes?: string[]): Promise<unknown[]> {
  const children = args.map((a, i) => {
    const child = spawn(process.execPath, ['--import', 'tsx', NODE, ...a], {
      env: { ...process.env, VIS_HOME: homes?.[i] ?? place.home, VIS_DATABASE_URL: place.databaseUrl },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => {
      stderr += d
    })
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
    return { child, lines, stderr: () => stderr, exited: once(child, 'exit') }
  })
  for (const c of children) {
    const first = await c.lines.next()
    assert.equal(first.value, 'ready', c.stderr())
  }
  for (const c of children) c.child.stdin.end('go\n')
  const results: unknown[] = []
  for (const c of children) {
    const line = await c.lines.next()
    const [code] = await c.exited
    assert.equal(code, 0, c.stderr())
    results.push(JSON.parse(String(line.value)))
  }
  return results
}
