import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Engine } from '../../src/engine/index.js'

export const python = process.env.VIS_PYTHON_VERSION

export function newHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'vis-drafts-home-'))
  process.env.VIS_HOME = home
  return home
}

// A small git repository: the workspace a draft covers.
export function newRepo(): string {
  const root = mkdtempSync(join(tmpdir(), 'vis-drafts-root-'))
  writeFileSync(join(root, 'keep.txt'), 'unchanged\n')
  writeFileSync(join(root, 'edit.txt'), 'line 1\nline 2\nline 3\n')
  writeFileSync(join(root, 'gone.txt'), 'to be deleted\n')
  writeFileSync(join(root, 'move-me.txt'), 'moved content\n')
  writeFileSync(join(root, 'blob.bin'), Buffer.from([0, 1, 2, 3, 0, 255]))
  const git = (...a: string[]) =>
    execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...a], {
      cwd: root,
      stdio: 'pipe',
    })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('commit', '-q', '-m', 'base')
  return root
}

// Every file below root (the .git directory included) with its content hash and mode.
export function treeHash(root: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (rel: string) => {
    for (const d of readdirSync(join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${d.name}` : d.name
      if (d.isDirectory()) walk(p)
      else {
        const st = statSync(join(root, p))
        out[p] = `${(st.mode & 0o7777).toString(8)}:${createHash('sha256')
          .update(readFileSync(join(root, p)))
          .digest('hex')}`
      }
    }
  }
  walk('')
  return out
}

// Polls until cond holds (no fixed sleeps).
export async function until(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

// Runs a block that must succeed; its view.
export async function run(e: Engine, id: string, code: string) {
  const r = await e.runBlock(id, { code })
  assert.equal(r.block.status, 'done')
  assert.equal(r.block.error, null, JSON.stringify(r.block.error))
  return r.block
}
