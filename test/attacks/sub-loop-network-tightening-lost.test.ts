// ATTACK (surface 5, session policy / sub_loop children): SECURITY.md, Child turns: "A child turn
// runs in a new session, but it is the parent's fork and must see no more than the parent sees
// now". A session's network can be tightened for the rest of its life (`Session.setNetwork`,
// SECURITY.md Network egress: "tightening at run time ... applies ... for every new connection"),
// e.g. a host that turns a session's network off once it has fetched what it needed. But
// `engine.createChildSession` builds the child's policy from the parent's STORED policy (as it was
// created), never from the live, tightened one: a sub_loop child of a parent whose network was
// turned off gets the network back, with the original allow list, and reaches what its parent no
// longer may. A model (hostile, like all guest code) only has to call sub_loop().
// Here: a listener on 127.0.0.1:PORT allowed by its IP entry; the parent fetches it (allowed),
// the host turns the parent's network off (the parent's next fetch is refused), then the parent's
// turn calls sub_loop() and the child fetches /child. On the current code the listener receives
// /child. The second test: the same tightening is lost when the host restarts.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { pyCall } from '../agent/double.js'
import { type Harness, harness, lastChatMessage } from '../agent/harness.js'

const fetchCode = (port: number, path: string, tag: string) =>
  `import urllib.request\ntry:\n    print('${tag}', urllib.request.urlopen('http://127.0.0.1:${port}${path}', timeout=20).read().decode().strip())\nexcept Exception as e:\n    print('${tag} refused', type(e).__name__, str(e)[:160])`

test("a sub_loop child does not get back the network its parent's tightening took away", async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-subnet-'))
  const seen: string[] = []
  let srv: Server | undefined
  let h: Harness | undefined
  try {
    srv = createServer((req, res) => {
      seen.push(String(req.url))
      res.end('listener-answer\n')
    })
    await new Promise<void>((res) => srv!.listen(0, '127.0.0.1', () => res()))
    const port = (srv.address() as { port: number }).port
    h = await harness({ root, config: { subLoops: { concurrency: 2, timeoutMs: 120_000, maxDepth: 2 } } })
    const s = await h.engine.createSession({
      roots: [root],
      network: { enabled: true, allow: [`127.0.0.1:${port}`] },
    })
    // Allowed: before the tightening the parent reaches the listener.
    const before = await h.engine.runBlock(s.id, { code: fetchCode(port, '/parent-before', 'PARENT') })
    assert.equal(before.block.stdout, 'PARENT listener-answer\n')
    assert.deepEqual(seen, ['/parent-before'])

    // The host turns the session's network off for the rest of its life.
    const live = await h.engine.runtimeSession(s.id)
    await live.setNetwork({ enabled: false })
    const after = await h.engine.runBlock(s.id, { code: fetchCode(port, '/parent-after', 'PARENT') })
    assert.match(after.block.stdout ?? '', /^PARENT refused /, after.block.stdout ?? '')
    assert.deepEqual(seen, ['/parent-before'])

    h.double.script([], (req) => {
      const first = req.body.messages.find((m: { role: string }) => m.role === 'user')
      if (JSON.stringify(first).includes('CHILD-TASK')) {
        if (JSON.stringify(lastChatMessage(req.body)).includes('CHILDSAW')) return { text: 'child done' }
        return { calls: [pyCall(fetchCode(port, '/child', 'CHILDSAW'))] }
      }
      if (JSON.stringify(lastChatMessage(req.body)).includes('PARENT-' + 'DONE'))
        return { text: 'parent done' }
      return {
        calls: [
          pyCall(
            "try:\n    print('PARENT-' + 'DONE', await sub_loop('CHILD-TASK: fetch it'))\nexcept Exception as e:\n    print('PARENT-' + 'DONE refused', getattr(e, 'code', ''), str(e)[:160])",
          ),
        ],
      }
    })
    const r = await h.agent.turn(s.id, 'PARENT-TASK: ask a helper')
    const childOut = r.children
      .map((c) => h!.agent.getTurn(c.session_id, c.turn_id))
      .flatMap((t) => t.iterations.flatMap((it) => it.block_ids))
      .map((id) => h!.engine.getBlock(id).stdout ?? '')
      .join('\n')
    assert.ok(
      !seen.includes('/child'),
      `the child reached the listener its parent's network no longer may (requests: ${JSON.stringify(seen)}):\n${childOut}`,
    )
    // Refused for the right reason: the child's own block met the network refusal.
    assert.match(childOut, /CHILDSAW refused /)
  } finally {
    await h?.close()
    if (h) rmSync(h.home, { recursive: true, force: true })
    if (srv) await new Promise<void>((res) => srv!.close(() => res()))
    rmSync(root, { recursive: true, force: true })
  }
})

// The same stored policy serves a session reopened by a later host process (a restart, an
// upgrade, another node's takeover): the tightening lived only in the worker that took it, so the
// reopened session's worker has the network back. On the current code the listener receives
// /after-restart.
test('a network tightening survives a host restart', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-subnet-'))
  const seen: string[] = []
  let srv: Server | undefined
  let h: Harness | undefined
  try {
    srv = createServer((req, res) => {
      seen.push(String(req.url))
      res.end('listener-answer\n')
    })
    await new Promise<void>((res) => srv!.listen(0, '127.0.0.1', () => res()))
    const port = (srv.address() as { port: number }).port
    h = await harness({ root })
    const s = await h.engine.createSession({
      roots: [root],
      network: { enabled: true, allow: [`127.0.0.1:${port}`] },
    })
    const before = await h.engine.runBlock(s.id, { code: fetchCode(port, '/before', 'SAW') })
    assert.equal(before.block.stdout, 'SAW listener-answer\n')
    await (await h.engine.runtimeSession(s.id)).setNetwork({ enabled: false })
    const off = await h.engine.runBlock(s.id, { code: fetchCode(port, '/after', 'SAW') })
    assert.match(off.block.stdout ?? '', /^SAW refused /, off.block.stdout ?? '')
    await h.restart()
    const reopened = await h.engine.runBlock(s.id, { code: fetchCode(port, '/after-restart', 'SAW') })
    assert.ok(
      !seen.includes('/after-restart'),
      `the reopened session reached the listener its tightened network refused: ${reopened.block.stdout}`,
    )
    assert.match(reopened.block.stdout ?? '', /^SAW refused /, reopened.block.stdout ?? '')
  } finally {
    await h?.close()
    if (h) rmSync(h.home, { recursive: true, force: true })
    if (srv) await new Promise<void>((res) => srv!.close(() => res()))
    rmSync(root, { recursive: true, force: true })
  }
})

// Nor does it need a restart: the same session's next worker is started from the stored policy
// too. A draft (`engine.draft(id).create`, which moves the worker into the draft's mount
// namespace) and a worker stop (`engine.stopWorker`, which review and `apply({ expect })` do
// before they diff) both give the session's next block the network back. On the current code the
// listener receives /after-stop and /after-draft.
test("a session's own next worker keeps its network tightening (worker stop, draft)", async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-subnet-'))
  const seen: string[] = []
  let srv: Server | undefined
  let h: Harness | undefined
  try {
    srv = createServer((req, res) => {
      seen.push(String(req.url))
      res.end('listener-answer\n')
    })
    await new Promise<void>((res) => srv!.listen(0, '127.0.0.1', () => res()))
    const port = (srv.address() as { port: number }).port
    h = await harness({ root })
    const s = await h.engine.createSession({
      roots: [root],
      network: { enabled: true, allow: [`127.0.0.1:${port}`] },
    })
    const run = async (path: string) =>
      (await h!.engine.runBlock(s.id, { code: fetchCode(port, path, 'SAW') })).block.stdout ?? ''
    assert.equal(await run('/before'), 'SAW listener-answer\n')
    await (await h.engine.runtimeSession(s.id)).setNetwork({ enabled: false })
    assert.match(await run('/after'), /^SAW refused /)
    await h.engine.stopWorker(s.id, 'the host stops the worker, as a review does before its diff')
    const afterStop = await run('/after-stop')
    // Tightened again on the new worker; then a draft.
    await (await h.engine.runtimeSession(s.id)).setNetwork({ enabled: false })
    assert.match(await run('/again'), /^SAW refused /)
    await h.engine.draft(s.id).create('try something')
    const afterDraft = await run('/after-draft')
    assert.deepEqual(
      seen,
      ['/before'],
      `the session's next worker had the network back (requests: ${JSON.stringify(seen)}):\n${afterStop}${afterDraft}`,
    )
    assert.match(afterStop, /^SAW refused /)
    assert.match(afterDraft, /^SAW refused /)
  } finally {
    await h?.close()
    if (h) rmSync(h.home, { recursive: true, force: true })
    if (srv) await new Promise<void>((res) => srv!.close(() => res()))
    rmSync(root, { recursive: true, force: true })
  }
})
