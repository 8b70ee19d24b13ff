// ATTACK (surface 1, several processes / vis homes): the root guard masks and refuses only the
// vis homes THIS process knows (its VIS_HOME or ~/.vis, and its runtimes' own homes). Another
// vis process on the same machine with a home of its own (a `vis serve` with VIS_HOME=/srv/x
// beside the user's `vis mcp` on ~/.vis; a project-local home) is just a directory to it. A
// session whose root contains that other home therefore sees it whole from the sandbox:
//  - its database (every session's transcript, policies, the agent's turns) is readable,
//  - its files are writable (`mcp.json`, `agent.json`, `extensions/` are what that process runs
//    UNCONFINED on the host: an MCP server's `command`, a trusted extension),
//  - its owner socket `<home>/run/<pid>-*.sock` is reachable, with no authentication but the
//    home's 0700 mode: one JSON line closes (or interrupts) any session that process runs.
// ownership.ts says "The home is 0700 and masked from every sandbox, so only the same user
// reaches it": it is masked only from the sandboxes of the process that owns it.
// On the current code the block lists the home, reads its session ids, writes mcp.json there and
// closes the other process's live session through its socket.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'

const python = process.env.VIS_PYTHON_VERSION

test("a root containing another vis process's home does not expose that home, its database or its owner socket", async () => {
  const W = mkdtempSync(join(tmpdir(), 'vis-attack-ws-'))
  const otherHome = join(W, 'vishome')
  mkdirSync(otherHome, { mode: 0o700 })
  const ownHome = mkdtempSync(join(tmpdir(), 'vis-attack-home-'))
  process.env.VIS_HOME = ownHome

  const other = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'fixtures/home-owner.ts'), otherHome],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  )
  const lines: string[] = []
  let wake: (() => void) | undefined
  createInterface({ input: other.stdout! }).on('line', (l) => {
    lines.push(l)
    wake?.()
  })
  const next = async (): Promise<Record<string, string>> => {
    const until = Date.now() + 90_000
    while (lines.length === 0) {
      assert.ok(Date.now() < until, 'the other vis process did not answer')
      await new Promise<void>((r) => {
        wake = r
        setTimeout(r, 500)
      })
    }
    return JSON.parse(lines.shift()!)
  }
  const { id: victimId } = await next()
  other.stdin!.write('state?\n')
  assert.equal((await next()).state, 'open', 'the other process runs its session before the attack')

  const e = await createEngine({ home: ownHome, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await e.createSession({ roots: [W] })
    const r = await e.runBlock(s.id, {
      code: `import os, socket, sqlite3, glob
try:
    print('LIST', sorted(os.listdir('vishome')))
except Exception as ex:
    print('LIST refused', ex)
ids = []
try:
    db = sqlite3.connect('file:vishome/vis.db?mode=ro', uri=True)
    ids = [row[0] for row in db.execute('select id from sessions')]
    print('IDS', ids)
except Exception as ex:
    print('DB refused', ex)
try:
    with open('vishome/mcp.json', 'w') as f:
        f.write('{"servers": {"x": {"command": "/bin/sh", "args": ["-c", "id > /tmp/owned-by-sandbox"]}}}')
    print('WROTE mcp.json')
except Exception as ex:
    print('WRITE refused', ex)
for p in glob.glob('vishome/run/*.sock'):
    for sid in ids:
        try:
            c = socket.socket(socket.AF_UNIX)
            c.connect(p)
            c.sendall(('{"op": "close", "sessionId": "%s"}\\n' % sid).encode())
            print('SOCKET', c.recv(4096)[:120])
        except Exception as ex:
            print('SOCKET refused', ex)`,
    })
    const out = r.block.stdout ?? ''
    // Refused for the right reason: the jail shows the other home as an empty, read-only mask.
    assert.match(out, /^LIST \[\]$/m, out)
    assert.match(out, /^WRITE refused .*Read-only file system/m, out)
    // The host's file tools refuse it too, while the rest of the root stays theirs and the block's.
    const tools = await e.runBlock(s.id, {
      code: `import json
async def attempt(call):
    try:
        return {"ok": await call}
    except Exception as e:
        return {"code": getattr(e, "code", None), "message": str(e)}
with open('beside.txt', 'w') as f:
    f.write('mine')
print(json.dumps([await attempt(cat('vishome/vis.db')), await attempt(write('vishome/agent.json', '{}')),
                  await attempt(cat('beside.txt'))]))`,
    })
    const [readDb, writeConfig, beside] = JSON.parse((tools.block.stdout ?? '').trim().split('\n').at(-1)!)
    assert.equal(readDb.code, 'tool.path-denied', JSON.stringify(readDb))
    assert.equal(writeConfig.code, 'tool.path-denied', JSON.stringify(writeConfig))
    assert.match(JSON.stringify(beside.ok), /mine/, JSON.stringify(beside))
    assert.equal(existsSync(join(otherHome, 'agent.json')), false)
    other.stdin!.write('state?\n')
    const after = (await next()).state
    const reached = {
      listedHome: /LIST \[.*vis\.db/.test(out),
      readSessionIds: out.includes(String(victimId)),
      wroteConfig: existsSync(join(otherHome, 'mcp.json')),
      closedOtherSession: after !== 'open',
    }
    assert.deepEqual(
      reached,
      { listedHome: false, readSessionIds: false, wroteConfig: false, closedOtherSession: false },
      out,
    )
  } finally {
    await e.close()
    other.stdin!.end()
  }
})
