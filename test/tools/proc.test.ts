import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { HeadTail, Ring } from '../../src/tools/proc/bounded.js'
import { isAlive, killTree, newTreeToken, processTree, TREE_MARK } from '../../src/tools/proc/tree.js'

test('HeadTail keeps the first and last bytes and counts what it dropped', () => {
  const b = new HeadTail(4, 4)
  b.push(Buffer.from('abc'))
  assert.equal(b.text(), 'abc')
  b.push(Buffer.from('defghij'))
  b.push(Buffer.from('klmn'))
  assert.equal(b.total, 14)
  assert.equal(b.dropped, 6)
  assert.equal(b.text(), 'abcd\n… [6 bytes omitted] …\nklmn')
  // A cut through a multi-byte character never shows half of it.
  const u = new HeadTail(5, 5)
  u.push(Buffer.from('ééééééééé'))
  assert.doesNotMatch(u.text(), /\uFFFD/)
})

test('Ring keeps the newest bytes addressed by absolute cursors', () => {
  const r = new Ring(8)
  r.push(Buffer.from('0123456789'))
  r.push(Buffer.from('abc'))
  assert.equal(r.total, 13)
  assert.deepEqual(r.read(0, 100), { text: '56789abc', from: 5, dropped: 5 })
  assert.deepEqual(r.read(10, 100), { text: 'abc', from: 10, dropped: 0 })
  assert.deepEqual(r.read(0, 2), { text: 'bc', from: 11, dropped: 11 })
})

// Field 6 of /proc/PID/stat (after the parenthesised command name) is the session id.
function sessionOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3])
}

test('processTree finds a daemon that left both the parent chain and the session', async () => {
  const token = newTreeToken()
  // The root exits at once; its grandchild calls setsid and lives on.
  const child = spawn('bash', ['-c', 'setsid sleep 30 >/dev/null 2>&1 & echo $!'], {
    detached: true,
    env: { ...process.env, [TREE_MARK]: token },
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  let out = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  await new Promise((r) => child.on('close', r))
  const daemon = Number(out.trim())
  assert.ok(isAlive(daemon))
  // `echo $!` can run before the forked child has called setsid: wait until it leads its own session.
  for (let i = 0; i < 250 && sessionOf(daemon) !== daemon; i++) await new Promise((r) => setTimeout(r, 20))
  assert.equal(sessionOf(daemon), daemon, 'the grandchild started a session of its own')
  assert.ok(!processTree(child.pid!).includes(daemon), 'without the mark it is out of reach')
  assert.ok(processTree(child.pid!, token).includes(daemon))
  killTree(child.pid!, token)
  for (let i = 0; i < 100 && isAlive(daemon); i++) await new Promise((r) => setTimeout(r, 20))
  assert.equal(isAlive(daemon), false)
  // The test process itself is never part of a tree.
  assert.ok(!processTree(process.pid).includes(process.pid))
})
