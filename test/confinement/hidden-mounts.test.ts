// The mount view for hidden directories (extension directories inside a root): an empty
// read-only tmpfs over each, after the root's read-write bind, with every directory between
// pinned as its own (noexec) mount so the sandbox cannot rename the mask aside.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { bubblewrapArgs, hiddenMounts, launcherArgs } from '../../src/confinement/sandbox-args.js'
import { ConfinementPolicySchema } from '../../src/contracts/jail-policy.js'

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

// A root that contains the vis-runtime package (`npm install vis-runtime` in /w): the package is
// bound read-only after the root, the directories between pinned so it cannot be renamed aside,
// a mask inside it stays read-only around the mask, and a root that is the package itself ends
// read-only (the read-only bind goes last at one path).
test('the package inside a root is bound read-only on top of it, its parents pinned', () => {
  const pkg = '/w/node_modules/vis-runtime'
  const p = ConfinementPolicySchema.parse({ roots: ['/w'], hidden: [`${pkg}/.vis/extensions`] })
  const args = bubblewrapArgs({ ...input, policy: p, packageMounts: [pkg] })
  const at = (...seq: string[]) => args.findIndex((_, k) => seq.every((s, j) => args[k + j] === s))
  const root = at('--bind', '/w', '/w')
  const pin = at('--bind', '/w/node_modules', '/w/node_modules')
  const ro = at('--ro-bind', pkg, pkg)
  const inner = at('--ro-bind', `${pkg}/.vis`, `${pkg}/.vis`)
  assert.ok(root >= 0 && root < pin && pin < ro && ro < inner, args.join(' '))
  assert.ok(
    !args.some((a, i) => a === '--bind' && args[i + 1] === `${pkg}/.vis`),
    'no writable pin inside it',
  )
  const self = bubblewrapArgs({
    ...input,
    policy: ConfinementPolicySchema.parse({ roots: [pkg] }),
    packageMounts: [pkg],
  })
  const last = self.map((a, i) => (a.endsWith('bind') && self[i + 2] === pkg ? a : '')).filter(Boolean)
  assert.deepEqual(last, ['--bind', '--ro-bind'])
})
