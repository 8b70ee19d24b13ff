// The README's quick start, run as written: its shell block (serve with a token, create a
// session over HTTP, run `print(1+1)`, read the answer) under bash, and its library snippet
// under node, in a project where `vis-runtime` is this checkout (`npm run build` first). Only the
// port is changed, to a free one.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { closedPort, repoRoot, tempDir } from './helpers.js'

function quickStartBlock(lang: string, marker: string): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
  const start = readme.indexOf('## Quick start')
  const end = readme.indexOf('\n## ', start + 1)
  assert.ok(start >= 0 && end > start)
  for (const m of readme.slice(start, end).matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))) {
    if (m[1]?.includes(marker)) return m[1]
  }
  throw new Error(`no ${lang} block with ${marker} in the README's quick start`)
}

function project(): string {
  const dir = tempDir('vis-quickstart-')
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true })
  symlinkSync(repoRoot, join(dir, 'node_modules', 'vis-runtime'))
  symlinkSync(join(repoRoot, 'bin', 'vis.js'), join(dir, 'node_modules', '.bin', 'vis'))
  writeFileSync(join(dir, 'package.json'), '{"name":"quickstart","private":true,"type":"module"}\n')
  return dir
}

function env(home: string): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, VIS_HOME: home }
  for (const k of Object.keys(e)) if (k.startsWith('npm_') || k === 'VIS_TOKEN') delete e[k]
  return e
}

test("the quick start's curl block runs print(1+1) over HTTP and reads 2", { timeout: 120_000 }, async () => {
  const port = await closedPort()
  const script = quickStartBlock('sh', 'print(1+1)').replaceAll('7878', String(port))
  const dir = project()
  // bash -e: a failing step fails the block; its own process group, so the server it left
  // running is ended with it.
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: dir,
    env: env(join(dir, 'home')),
    detached: true,
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  child.stderr.on('data', (d) => {
    err += d
  })
  const closed = new Promise<void>((r) => child.on('close', () => r()))
  // The server it started in the background keeps the output pipes open: bash's exit is the end.
  const status = await new Promise<number | null>((r) => child.on('exit', r))
  process.kill(-(child.pid as number), 'SIGTERM')
  await closed
  assert.equal(status, 0, err)
  const block = JSON.parse(out.trim().split('\n').at(-1) as string) as Record<string, unknown>
  assert.equal(block.status, 'done', out)
  assert.equal(block.stdout, '2\n')
  assert.equal(block.error, null)
  assert.match(String(block.session_id), /^ses_/)
})

test("the quick start's library snippet prints 2", { timeout: 120_000 }, async () => {
  const dir = project()
  // Plain JavaScript as written (no type annotations), so node runs it without a compiler.
  writeFileSync(join(dir, 'quick.mjs'), quickStartBlock('ts', 'createRuntime'))
  const child = spawn(process.execPath, ['quick.mjs'], { cwd: dir, env: env(join(dir, 'home')) })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  child.stderr.on('data', (d) => {
    err += d
  })
  const status = await new Promise<number | null>((r) => child.on('close', r))
  assert.equal(status, 0, err)
  assert.equal(out, '2\n')
})
