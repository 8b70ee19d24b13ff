// The mount view for hidden directories (extension directories inside a root): an empty
// read-only tmpfs over each, after the root's read-write bind, with every directory between
// pinned as its own (noexec) mount so the sandbox cannot rename the mask aside.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ConfinementPolicySchema } from '../../src/confinement/policy.js'
import { bubblewrapArgs, hiddenMounts, launcherArgs } from '../../src/confinement/sandbox-args.js'

const policy = ConfinementPolicySchema.parse({
  roots: ['/w', '/w/p/data'],
  hidden: ['/w/p/.vis/extensions', '/home/u/.vis/extensions'],
})
const input = { policy, command: '/usr/bin/node', launcher: '/opt/vis-launcher', landlockAbi: 4 }

test('hidden directories inside a root are masked after the root, their parents pinned; others ignored', () => {
  assert.deepEqual(hiddenMounts(policy), { pins: ['/w/p', '/w/p/.vis'], masks: ['/w/p/.vis/extensions'] })
  const args = bubblewrapArgs(input)
  const at = (...seq: string[]) => {
    const i = args.findIndex((_, k) => seq.every((s, j) => args[k + j] === s))
    assert.ok(i >= 0, `missing ${seq.join(' ')}`)
    return i
  }
  const root = at('--bind', '/w', '/w')
  const pin1 = at('--bind', '/w/p', '/w/p')
  const pin2 = at('--bind', '/w/p/.vis', '/w/p/.vis')
  const mask = at('--tmpfs', '/w/p/.vis/extensions', '--remount-ro', '/w/p/.vis/extensions')
  assert.ok(root < pin1 && pin1 < pin2 && pin2 < mask)
  assert.ok(!args.includes('/home/u/.vis/extensions'), 'a hidden path outside the roots is not mounted')
  const launcher = launcherArgs(input, { inNamespace: true })
  for (const p of ['/w', '/w/p', '/w/p/.vis']) {
    assert.ok(
      launcher.some((a, i) => a === '--noexec' && launcher[i + 1] === p),
      `${p} remounted noexec`,
    )
  }
})

test('without hidden directories the mount view is unchanged', () => {
  const plain = ConfinementPolicySchema.parse({ roots: ['/w'] })
  const args = bubblewrapArgs({ ...input, policy: plain })
  assert.ok(!args.includes('--remount-ro'))
  assert.deepEqual(hiddenMounts(plain), { pins: [], masks: [] })
})

test('roots and pins are bound from their fds; a mask turns read-only after what is bound inside it', () => {
  const p = ConfinementPolicySchema.parse({
    roots: ['/w', '/w/home/outbox/w1'],
    hidden: ['/w/home'],
  })
  const args = bubblewrapArgs({ ...input, policy: p, mountFds: { '/w': 7 } })
  const at = (...seq: string[]) => args.findIndex((_, k) => seq.every((s, j) => args[k + j] === s))
  // The root comes from fd 7 (what the guard checked), a directory without an fd from its path.
  assert.ok(at('--bind', '/proc/self/fd/7', '/w') >= 0)
  assert.equal(at('--bind', '/w', '/w'), -1)
  const tmpfs = at('--tmpfs', '/w/home')
  const inner = at('--bind', '/w/home/outbox/w1', '/w/home/outbox/w1')
  const ro = at('--remount-ro', '/w/home')
  assert.ok(tmpfs >= 0 && tmpfs < inner && inner < ro, args.join(' '))
})
