// `vis python` at the edges, each case against python3 (the staged interpreter) in the same run
// (issue 33 §7): Ctrl-C before the user's code runs ends the process quietly by SIGINT; Ctrl-C once it runs
// (after a marker it prints) prints python3's traceback and the process dies by SIGINT, not exit 130.
// The start-up ratio is bench/python-startup.js's to print. Needs `npm run build`.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
// @ts-expect-error: a plain JavaScript benchmark, shared so the test and `node bench/...` agree.
import { stagedPython } from '../../bench/python-startup.js'
import { repoRoot } from './helpers.js'

type Ended = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

const python3 = stagedPython() as string
const vis = (args: string[]): [string, string[]] => [
  process.execPath,
  [join(repoRoot, 'bin', 'vis.js'), 'python', ...args],
]
const py = (args: string[]): [string, string[]] => [python3, args]

// Runs it; sends SIGINT at once (before any output) or when stdout shows the marker.
function interrupt([cmd, args]: [string, string[]], when: 'at-once' | 'after-marker'): Promise<Ended> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let sent = false
    const send = () => {
      if (!sent) child.kill('SIGINT')
      sent = true
    }
    child.stdout.on('data', (d) => {
      stdout += d
      if (when === 'after-marker' && stdout.includes('MARKER')) send()
    })
    child.stderr.on('data', (d) => {
      stderr += d
    })
    if (when === 'at-once') send()
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

const LOOP =
  // One write for the marker: print() writes its end separately, and the signal may land between.
  "import atexit, sys, time\natexit.register(print, 'ATEXIT')\nsys.stdout.write('MARKER\\n')\nsys.stdout.flush()\nwhile True: time.sleep(0.01)"

test('Ctrl-C once the code runs: the traceback, then death by SIGINT, as python3', {
  timeout: 60_000,
}, async () => {
  const want = await interrupt(py(['-c', LOOP]), 'after-marker')
  const got = await interrupt(vis(['-c', LOOP]), 'after-marker')
  assert.equal(want.signal, 'SIGINT', JSON.stringify(want))
  assert.deepEqual([got.code, got.signal], [want.code, want.signal], JSON.stringify(got))
  for (const r of [want, got]) {
    assert.equal(r.stdout, 'MARKER\nATEXIT\n', 'atexit ran before the signal, as in python3')
    assert.match(r.stderr, /^Traceback \(most recent call last\):\n/)
    assert.match(r.stderr, /\nKeyboardInterrupt\n$/)
  }
})

test('Ctrl-C before the code runs: quiet death by SIGINT, as in python3 start-up', {
  timeout: 60_000,
}, async () => {
  const want = await interrupt(py(['-c', LOOP]), 'at-once')
  const got = await interrupt(vis(['-c', LOOP]), 'at-once')
  // python3 in the same run: its code never runs. Where the signal lands in its start-up decides
  // how it ends: killed by SIGINT quietly, or (inside site's imports) a fatal start-up error.
  assert.equal(want.stdout, '')
  assert.ok(want.signal === 'SIGINT' || (want.code ?? 0) !== 0, JSON.stringify(want))
  assert.deepEqual([got.code, got.signal, got.stdout, got.stderr], [null, 'SIGINT', '', ''])
})
