// The session policy is defined once (WorkerPolicy, with the one network policy inside it);
// its other forms are derived by one function each: the jail (jailPolicy), the egress
// proxy's rules (the policy's own network, tightened by tightenedNetwork) and the audit
// hook's policy (toNativePolicy / auditNetwork). These properties check, on seeded random
// policies, that the forms agree with the policy, the audit hook's through the real hook in
// real unjailed workers.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { compilePolicy, evaluate } from '../../src/confinement/egress/evaluate.js'
import { ConfinementPolicySchema, LimitsSchema } from '../../src/contracts/jail-policy.js'
import type { NetworkEntryInput, NetworkPolicy } from '../../src/contracts/network-policy.js'
import { SessionPolicySchema } from '../../src/engine/schemas.js'
import { normalizePolicy as normalizeAuditPolicy } from '../../src/native/audit-policy.js'
import { isVisError } from '../../src/util/errors.js'
import { auditNetwork, toNativePolicy } from '../../src/worker/native-policy.js'
import { Worker } from '../../src/worker/worker.js'
import {
  jailPolicy,
  networkLoosening,
  normalizePolicy,
  tightenedNetwork,
  type WorkerPolicy,
} from '../../src/worker/worker-policy.js'

const home = mkdtempSync(join(tmpdir(), 'vis-policy-forms-'))
process.env.VIS_HOME = home
after(() => rmSync(home, { recursive: true, force: true }))

// A small seeded generator (mulberry32): a failing case is reproduced by its seed.
function rng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T
  const chance = (p: number) => next() < p
  const some = <T>(xs: readonly T[], max: number): T[] => {
    const n = xs.length ? int(max + 1) : 0
    return [...new Set(Array.from({ length: n }, () => pick(xs)))]
  }
  return { int, pick, chance, some }
}
type Rng = ReturnType<typeof rng>

const NAMES = ['lab.test', 'api.lab.test', 'x.api.lab.test', 'other.test', 'cdn.other.test', 'far.example']
const V4 = ['198.51.100.7', '198.51.100.8', '203.0.113.9']
const V6 = ['2001:db8::5']
const PORTS = [80, 443, 8080]

function hostText(r: Rng): string {
  const k = r.int(10)
  if (k === 0) return '*'
  if (k <= 3) return r.pick(NAMES)
  if (k <= 5) return `*.${r.pick(NAMES)}`
  if (k <= 7) return r.pick(V4)
  if (k === 8) return r.pick(V6)
  return r.pick(['198.51.100.0/24', '2001:db8::/32', '203.0.113.9/32'])
}

function entryText(r: Rng): string {
  const host = hostText(r)
  if (!r.chance(0.3)) return host
  const ports = r.some(PORTS, 2)
  if (ports.length === 0) return host
  return `${host.includes(':') ? `[${host.split('/')[0]}]` : host}:${ports.join(',')}`
}

function allowEntry(r: Rng): NetworkEntryInput {
  const host = entryText(r)
  if (!r.chance(0.25)) return host
  const k = r.int(5)
  if (k === 0) return { host, access: 'none' }
  if (k === 1) return { host, access: 'read-only' }
  if (k === 2) return { host, methods: r.chance(0.5) ? ['*'] : ['GET'] }
  if (k === 3) return { host, paths: ['/v1/*'] }
  return { host, access: 'full' }
}

function randomNetwork(r: Rng): NetworkPolicy {
  const allow = r.chance(0.15) ? [] : Array.from({ length: 1 + r.int(4) }, () => allowEntry(r))
  const deny = r.chance(0.6) ? [] : Array.from({ length: 1 + r.int(2) }, () => entryText(r))
  return normalizePolicy({ network: { enabled: true, allow, deny } }).network
}

function randomPolicy(r: Rng): WorkerPolicy {
  const roots = r.some(['/srv/a', '/srv/b', '/srv/b/c', '/srv/d'], 3)
  return normalizePolicy({
    roots,
    ...(r.chance(0.3) ? { within: ['/srv'] } : {}),
    ...(r.chance(0.3) && roots[0] ? { pins: { [roots[0]]: '2049:77' } } : {}),
    network: r.chance(0.3) ? { enabled: false } : randomNetwork(r),
    shell: r.chance(0.5),
    ...(r.chance(0.5) ? { limits: { memoryMb: 256 + r.int(512), wallClockMs: 1000 + r.int(9000) } } : {}),
    ...(r.chance(0.3) && roots[0] ? { hidden: [join(roots[0], '.vis-ext')] } : {}),
    ...(r.chance(0.2)
      ? { overlay: { root: '/srv/a', lower: '/srv/a', upper: '/var/d/upper', dir: '/var/d' } }
      : {}),
  })
}

// Every connection the property looks at: each name, a subdomain of it, each address, on
// each port. The proxy's own floor (metadata names, address classes) is not among them: the
// hook of an unjailed worker cannot apply it, and SECURITY.md says so.
const REQUESTS: [string, number][] = [
  ...NAMES.flatMap((n) => [n, `deep.${n}`]),
  'unlisted.example',
  ...V4,
  '198.51.100.200',
  ...V6,
].flatMap((h) => PORTS.map((p): [string, number] => [h, p]))

// The proxy's verdict on a connection (a tunnel: what the hook sees is one).
const proxyAllows = (net: NetworkPolicy, [host, port]: [string, number]) =>
  evaluate(compilePolicy(net), { host, port, tunnel: true }).allowed

describe('the jail form', () => {
  test('jailPolicy keeps every field of the session policy, for the worker and the tool jails alike', () => {
    const r = rng(35)
    for (let i = 0; i < 500; i++) {
      const p = randomPolicy(r)
      const readOnly = ['/usr/lib/git-core']
      const worker = ConfinementPolicySchema.parse(jailPolicy(p, { readOnly, writable: ['/var/outbox'] }))
      const tool = ConfinementPolicySchema.parse(jailPolicy(p, { readOnly, shell: true }))
      for (const [jail, shell, writable] of [
        [worker, p.shell, ['/var/outbox']],
        [tool, true, []],
      ] as const) {
        assert.deepEqual(jail.roots, p.roots, `seed 35 #${i}: roots, the workspace first`)
        assert.deepEqual(jail.within, p.within)
        assert.deepEqual(jail.pins, p.pins)
        assert.deepEqual(jail.hidden, p.hidden ?? [])
        assert.deepEqual(jail.network, p.network, 'the proxy is built from exactly the policy network')
        assert.deepEqual(jail.limits, LimitsSchema.parse(p.limits ?? {}))
        assert.deepEqual(jail.overlay, p.overlay)
        assert.equal(jail.shell, shell)
        assert.deepEqual(jail.writable, writable)
        assert.deepEqual(jail.readOnly, readOnly)
      }
    }
  })
})

describe('the modes in every form (issue 32 §3)', () => {
  test('the jail, the hook and the mode agree on which roots are read-only', () => {
    const r = rng(32)
    for (let i = 0; i < 300; i++) {
      const base = randomPolicy(r)
      for (const mode of [undefined, 'read-only', 'review'] as const) {
        const p = normalizePolicy({ ...base, ...(mode ? { mode } : {}) })
        const jail = ConfinementPolicySchema.parse(jailPolicy(p, { readOnly: [] }))
        const hook = toNativePolicy(p, '/dist', ['/var/outbox'], { egressProxy: true })
        // read-only: every root; review: all but the draft's root (all of them before a draft).
        const expected =
          mode === 'read-only'
            ? p.roots
            : mode === 'review'
              ? p.roots.filter((root) => root !== p.overlay?.root)
              : []
        assert.deepEqual(jail.readOnlyRoots, expected, `seed 32 #${i} ${mode}`)
        assert.deepEqual(hook.readOnlyRoots ?? [], expected)
        for (const root of p.roots) {
          assert.equal(hook.readWrite.includes(root), !expected.includes(root), `${mode} ${root}`)
          assert.equal(hook.readOnly.includes(root), expected.includes(root), `${mode} ${root}`)
        }
        assert.ok(hook.readWrite.includes('/var/outbox'), 'the outbox stays writable')
        assert.equal(hook.readOnlyWhy !== undefined, expected.length > 0)
      }
    }
  })
})

describe('the one network schema', () => {
  test('its cap holds for the library and the HTTP API alike', () => {
    const allow = Array.from({ length: 257 }, (_, i) => `h${i}.test`)
    assert.throws(() => normalizePolicy({ network: { enabled: true, allow } }), /256/)
    assert.equal(SessionPolicySchema.safeParse({ network: { enabled: true, allow } }).success, false)
    assert.equal(
      normalizePolicy({ network: { enabled: true, allow: allow.slice(1) } }).network.allow.length,
      256,
    )
  })
})

describe('the proxy form', () => {
  test('a tightening the worker accepts never lets the proxy allow what it refused before', () => {
    const r = rng(3535)
    let checked = 0
    for (let i = 0; i < 400; i++) {
      const cur = randomNetwork(r)
      // Part of the current list, sometimes with a new entry; or no list (keep it); or off.
      const fresh = () => normalizePolicy({ network: { allow: [allowEntry(r)] } }).network.allow
      const list = [...r.some(cur.allow, 3), ...(r.chance(0.3) ? fresh() : [])]
      const next = r.chance(0.25)
        ? { enabled: false }
        : { enabled: true, ...(r.chance(0.2) ? {} : { allow: list }) }
      if (networkLoosening(cur, next) !== undefined) continue
      checked++
      const after = tightenedNetwork(cur, next)
      assert.deepEqual(after.deny, cur.deny, 'the deny list stays')
      for (const req of REQUESTS) {
        if (proxyAllows(after, req)) {
          assert.ok(
            proxyAllows(cur, req),
            `seed 3535 #${i}: ${req.join(':')} allowed only after tightening: ${JSON.stringify([cur, after])}`,
          )
        }
      }
    }
    assert.ok(checked > 100, `only ${checked} tightenings were accepted`)
  })
})

describe('tightening', () => {
  // Each of these was accepted as a tightening before, and let the proxy allow more.
  const loosenings: [string, NetworkPolicy, NetworkEntryInput[]][] = [
    ["a specific entry under deny '*'", { enabled: true, allow: [], deny: ['*'] }, ['lab.test']],
    [
      "dropping a 'none' rule beside '*'",
      { enabled: true, allow: ['*', { host: 'lab.test', access: 'none' }], deny: [] },
      ['*'],
    ],
    [
      'a full entry beside a read-only rule',
      { enabled: true, allow: ['*', { host: 'lab.test', access: 'read-only' }], deny: [] },
      ['*', { host: 'lab.test', access: 'read-only' }, 'lab.test'],
    ],
  ]
  for (const [what, cur, allow] of loosenings) {
    test(`${what} is refused as a loosening`, () => {
      const next = normalizePolicy({ network: { enabled: true, allow } }).network
      const opened = REQUESTS.some((req) => proxyAllows(next, req) && !proxyAllows(cur, req))
      assert.ok(opened, 'the change would open a destination')
      assert.match(networkLoosening(cur, next) ?? '', /lab\.test/)
    })
  }

  test('a real worker refuses the loosening and keeps refusing the destination', async () => {
    const policy = normalizePolicy({ network: { enabled: true, allow: [], deny: ['*'] } })
    const w = await Worker.start({ home, policy, confine: false, python: process.env.VIS_PYTHON_VERSION })
    try {
      await assert.rejects(
        w.call('network', { enabled: true, allow: ['lab.test'] }),
        (e) =>
          isVisError(e, 'worker.network-loosen') &&
          /lab\.test is not in the session's allow list/.test((e as Error).message),
      )
      assert.deepEqual(await hookVerdicts(w, [['lab.test', 443]]), [false])
      // What only tightens still passes.
      assert.deepEqual(await w.call('network', { enabled: false }), {
        enabled: false,
        allow: [],
        seccomp: false,
      })
    } finally {
      await w.close()
    }
  })
})

describe('the audit hook form', () => {
  test('an empty allow list is every destination in the hook as in the proxy; a list allowing nothing is the network off', () => {
    assert.deepEqual(auditNetwork({ enabled: true, allow: [], deny: [] }), { enabled: true })
    assert.deepEqual(
      auditNetwork({ enabled: true, allow: [{ host: 'lab.test', access: 'none' }], deny: [] }),
      {
        enabled: false,
      },
    )
    const p = normalizePolicy({ roots: ['/srv/a'], network: { enabled: true } })
    assert.deepEqual(toNativePolicy(p, '/dist').network, { enabled: true })
    assert.equal(proxyAllows(p.network, ['far.example', 443]), true)
  })

  test('the hook is never handed an empty list, which it would read as nothing allowed', () => {
    const installed = normalizeAuditPolicy({
      readOnly: [],
      readWrite: [],
      network: { enabled: true, allow: [] },
      processes: false,
      ctypes: false,
    })
    assert.deepEqual(installed.network, { enabled: true })
  })

  test('rules and the deny list are kept or refused, never dropped', () => {
    assert.deepEqual(
      auditNetwork({
        enabled: true,
        allow: [{ host: 'lab.test:443', access: 'full' }, 'other.test'],
        deny: [],
      }),
      { enabled: true, allow: ['lab.test:443', '*.lab.test:443', 'other.test', '*.other.test'] },
    )
    // A deny covering an allowed name whole removes it; one covering a part cannot be said.
    assert.deepEqual(
      auditNetwork({ enabled: true, allow: ['api.lab.test', 'other.test'], deny: ['lab.test'] }),
      {
        enabled: true,
        allow: ['other.test', '*.other.test'],
      },
    )
    for (const net of [
      { allow: ['*'], deny: ['lab.test'] },
      { allow: [], deny: ['198.51.100.7'] },
      // A denied address refuses the names resolving to it, which the hook cannot see.
      { allow: ['lab.test'], deny: ['198.51.100.7'] },
      { allow: ['lab.test'], deny: ['api.lab.test'] },
      { allow: ['*', { host: 'lab.test', access: 'read-only' as const }], deny: [] },
      { allow: ['198.51.100.0/24'], deny: [] },
      { allow: ['[2001:db8::5]:443'], deny: [] },
    ]) {
      assert.throws(
        () => auditNetwork({ enabled: true, ...net }),
        (e) =>
          isVisError(e, 'policy.audit-unexpressible') && /run the session jailed/.test((e as Error).message),
        JSON.stringify(net),
      )
    }
  })

  test('random policies: the real hook of an unjailed worker decides every connection as the proxy does, or the worker is refused', async () => {
    const r = rng(20261206)
    let agreed = 0
    let refused = 0
    for (let i = 0; i < 36; i++) {
      const network = randomNetwork(r)
      const policy = normalizePolicy({ network })
      const label = `seed 20261206 #${i}: ${JSON.stringify(network)}`
      let expressible = true
      try {
        auditNetwork(network)
      } catch (e) {
        assert.ok(isVisError(e, 'policy.audit-unexpressible'), label)
        expressible = false
      }
      // Only a few refusals go through a real worker: each is the same path.
      if (!expressible && refused >= 3) continue
      const started = Worker.start({ home, policy, confine: false, python: process.env.VIS_PYTHON_VERSION })
      if (!expressible) {
        await assert.rejects(started, (e) => isVisError(e, 'policy.audit-unexpressible'), label)
        refused++
        continue
      }
      const w = await started
      try {
        const verdicts = await hookVerdicts(w, REQUESTS)
        REQUESTS.forEach((req, k) => {
          assert.equal(verdicts[k], proxyAllows(network, req), `${label}: ${req.join(':')}`)
        })
        agreed++
      } finally {
        await w.close()
      }
    }
    assert.ok(agreed >= 12 && refused >= 2, `agreed on ${agreed}, refused ${refused}: the generator drifted`)
  })
})

// The hook's own verdict on `socket.connect((host, port))`, asked by raising the audit event
// the socket module raises, so nothing is looked up or dialled.
async function hookVerdicts(w: Worker, reqs: [string, number][]): Promise<boolean[]> {
  const code = [
    'import sys',
    'def _verdicts(reqs):',
    '    out = []',
    '    for host, port in reqs:',
    '        try:',
    "            sys.audit('socket.connect', None, (host, port))",
    '            out.append(True)',
    '        except PermissionError:',
    '            out.append(False)',
    '    return out',
  ].join('\n')
  const defined = (await w.call('exec', { code })) as { ok: boolean }
  assert.ok(defined.ok, JSON.stringify(defined))
  const r = (await w.call('eval', { expr: `_verdicts(${JSON.stringify(reqs)})` })) as {
    ok: boolean
    value: boolean[]
  }
  assert.ok(r.ok, JSON.stringify(r))
  return r.value
}
