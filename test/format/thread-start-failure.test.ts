// The formatter thread cannot start (the process is out of address space for a thread's stack):
// that call is answered unformatted and the next call, once a thread can start, is formatted. A
// real process, a real limit (prlimit on its address space), real ruff.
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const fixture = fileURLToPath(new URL('./fixtures/format-on-command.ts', import.meta.url))

function addressSpaceKb(pid: number): number {
  const m = /VmSize:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  assert.ok(m, 'VmSize in /proc/pid/status')
  return Number(m[1])
}

function setAddressSpace(pid: number, limit: string): void {
  const r = spawnSync('prlimit', ['--pid', String(pid), `--as=${limit}:`], { encoding: 'utf8' })
  assert.equal(r.status, 0, `prlimit: ${r.stderr}`)
}

test('a formatter thread that cannot start answers that call unformatted and the next call formats', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () => {
    const r = await lines.next()
    assert.ok(!r.done, 'the process ended before answering (a call left waiting for good)')
    return JSON.parse(r.value) as Record<string, unknown>
  }
  try {
    assert.deepEqual(await next(), { ready: true })
    // The soft limit only (raising it again needs no privilege), 2 MiB over what the process
    // holds: too little for a thread's stack, enough for the rest of the call.
    setAddressSpace(child.pid!, String((addressSpaceKb(child.pid!) + 2048) * 1024))
    child.stdin.write('a  =  1\n')
    const failed = await next()
    assert.match(String(failed.unavailable), /formatter thread did not start/, JSON.stringify(failed))
    setAddressSpace(child.pid!, 'unlimited')
    child.stdin.write('b  =  2\n')
    assert.deepEqual(await next(), { ok: 'b = 2\n' })
  } finally {
    child.kill()
  }
})
