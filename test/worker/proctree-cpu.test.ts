// treeCpuMs: the CPU a process tree has used, as the batteries benchmark reads it for a
// cold start. Live threads count to the nanosecond; children already reaped count too.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { test } from 'node:test'
import { treeCpuMs } from '../../src/worker/proctree.js'

// A node process that runs `body`, prints the CPU it measured for itself (ms) and then
// waits on stdin so its /proc entries stay readable.
async function burner(body: string): Promise<{ child: ChildProcess; selfMs: number }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `${body}\nconst u = process.cpuUsage(); process.stdout.write(String((u.user + u.system) / 1000) + '\\n'); process.stdin.resume()`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  let out = ''
  child.stdout!.setEncoding('utf8')
  child.stdout!.on('data', (d: string) => {
    out += d
  })
  while (!out.includes('\n')) {
    const [code] = await Promise.race([once(child, 'exit'), once(child.stdout!, 'data')])
    if (typeof code === 'number') throw new Error(`burner exited with ${code}`)
  }
  return { child, selfMs: Number(out.trim()) }
}

async function stop(child: ChildProcess) {
  child.stdin!.end()
  if (child.exitCode === null) await once(child, 'exit')
}

test('a process that burned CPU reports at least what it measured itself', async () => {
  const { child, selfMs } = await burner(
    'const end = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 >= 300 }; while (!end()) {}',
  )
  try {
    assert.ok(selfMs >= 300, `self ${selfMs}`)
    const ms = treeCpuMs(child.pid!)
    // schedstat counts every thread (V8's too), so the tree's figure is not below the
    // process's own; a generous upper bound proves it is not counting something else.
    assert.ok(ms >= selfMs * 0.95, `tree ${ms} ms < self ${selfMs} ms`)
    assert.ok(ms < selfMs + 5000, `tree ${ms} ms`)
  } finally {
    await stop(child)
  }
})

test('children that were already reaped are counted', async () => {
  // The grandchild burns 400 ms of CPU and is waited for (spawnSync) before the parent reports.
  const grandchild =
    'const e = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 >= 400 }; while (!e()) {}'
  const { child, selfMs } = await burner(
    `require('node:child_process').spawnSync(process.execPath, ['-e', ${JSON.stringify(grandchild)}], { stdio: 'inherit' })`,
  )
  try {
    const ms = treeCpuMs(child.pid!)
    // The parent itself used little; without the reaped child the figure would be under 400.
    assert.ok(ms >= selfMs + 380, `tree ${ms} ms, parent alone ${selfMs} ms`)
  } finally {
    await stop(child)
  }
})

test('a pid that does not exist costs nothing', () => {
  assert.equal(treeCpuMs(2 ** 22 + 12345), 0)
})
