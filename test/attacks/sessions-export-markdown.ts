// The set-up the attacks on `vis sessions export`'s Markdown share (sessions-export-markdown-injection.test.ts,
// sessions-export-markdown-cr-line.test.ts): a session on R, whose R/secret.txt holds a token the blocks
// read, runs the attack's blocks; `vis sessions export` writes the transcript, and prose() is the part a
// Markdown viewer renders as markup.
import { type SpawnSyncReturns, spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createEngine } from '../../src/engine/index.js'
import type { BlockView } from '../../src/engine/schemas.js'
import { python } from '../sessions/helpers.js'

const visBin = resolve(import.meta.dirname, '../../bin/vis.js')

// Runs `codes` one block each in a session on <base>/R (secret.txt holding `secret`), home <base>/home;
// the engine is closed before it returns, as `vis sessions export` reads a finished session.
export async function sessionReadingSecret(
  base: string,
  secret: string,
  codes: string[],
): Promise<{ home: string; id: string; blocks: BlockView[] }> {
  const home = join(base, 'home')
  const R = join(base, 'R')
  mkdirSync(home)
  mkdirSync(R)
  writeFileSync(join(R, 'secret.txt'), `${secret}\n`)
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [R] })
    const blocks: BlockView[] = []
    for (const code of codes) blocks.push((await engine.runBlock(s.id, { code })).block)
    return { home, id: s.id, blocks }
  } finally {
    await engine.close()
  }
}

// `vis sessions export <id> ...args` with that home.
export const visExport = (home: string, id: string, ...args: string[]): SpawnSyncReturns<string> =>
  spawnSync(process.execPath, [visBin, 'sessions', 'export', id, ...args], {
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 60_000,
  })

// The Markdown text outside fenced code blocks and code spans, split into lines as CommonMark splits
// them (LF, CR, CRLF): a fence closes on a line of at least as many of its characters, a code span on
// the same number of backticks, and a span is judged within its line, as block structure comes first.
export function prose(md: string): string[] {
  const out: string[] = []
  let open: string | undefined
  for (const line of md.split(/\r\n|\r|\n/)) {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (open !== undefined) {
      if (f && f[1]![0] === open[0] && f[1]!.length >= open.length && line.trim() === f[1]) open = undefined
      continue
    }
    if (f) {
      open = f[1]
      continue
    }
    out.push(line.replace(/(`+)[\s\S]*?\1/g, ''))
  }
  return out
}
