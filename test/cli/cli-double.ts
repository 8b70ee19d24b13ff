// `vis` as a person runs it (a real process through tsx) against the provider double, for the CLI
// tests of modes: one double per test file, started before its tests and closed after.
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before } from 'node:test'
import { ProviderDouble } from '../agent/double.js'

const vis = join(import.meta.dirname, '..', 'http', 'fixtures', 'vis.ts')
const tsx = import.meta.resolve('tsx')

export type Run = { code: number | null; stdout: string; stderr: string }

export function cliWithDouble(prefix: string) {
  let current: ProviderDouble | undefined
  before(async () => {
    current = await new ProviderDouble().start()
  })
  after(async () => {
    await current?.close()
  })
  const cli = {
    get double(): ProviderDouble {
      if (!current) throw new Error('the provider double starts before the tests')
      return current
    },
    visCli(args: string[], opts: { cwd: string; home: string; input?: string }): Promise<Run> {
      const child = spawn(process.execPath, ['--import', tsx, vis, ...args], {
        cwd: opts.cwd,
        env: {
          ...process.env,
          VIS_HOME: opts.home,
          VIS_MODEL: 'openai/double-model',
          OPENAI_BASE_URL: cli.double.openaiURL,
          OPENAI_API_KEY: 'sk-cli',
        },
        stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      })
      if (opts.input !== undefined) child.stdin!.end(opts.input)
      const r: Run = { code: null, stdout: '', stderr: '' }
      child.stdout!.on('data', (d) => {
        r.stdout += d
      })
      child.stderr!.on('data', (d) => {
        r.stderr += d
      })
      return new Promise((resolve) =>
        child.on('close', (code) => {
          r.code = code
          resolve(r)
        }),
      )
    },
    // A fresh vis home and a root holding notes.txt.
    dirs() {
      const home = mkdtempSync(join(tmpdir(), `vis-${prefix}-home-`))
      const root = mkdtempSync(join(tmpdir(), `vis-${prefix}-root-`))
      writeFileSync(join(root, 'notes.txt'), 'original\n')
      return { home, root }
    },
  }
  return cli
}
