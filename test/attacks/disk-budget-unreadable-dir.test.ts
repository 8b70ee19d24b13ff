// ATTACK (surface 4, the disk budget): the host measures the roots by listing every directory as
// the host user (src/sessions/disk-usage.ts); a directory it cannot list "counted nothing". The
// sandbox owns its roots' files (uid 65534 maps to the host user) and may chmod them: a
// directory made write+search only (0o300) still takes files the sandbox creates and opens by
// name, but neither readdir nor du can list it. Everything written below it was outside the
// budget, forever: 200 MiB against a 20 MiB budget, across blocks, with no interrupt and no
// refusal. (The host user, and the person reviewing the workspace, saw an empty-looking dir.)
// Root's walk reads every directory, so the host here runs as an ordinary user (nobody, under
// setpriv, with its own home) whatever user runs the test: a child process on the built dist/.
// Now the walk gives such a directory its owner's r+x back and counts it; a directory it still
// cannot read (not the host user's) counts as over the budget.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'

const host = fileURLToPath(new URL('./fixtures/disk-budget-host.mjs', import.meta.url))
const NOBODY = 65534
const made: string[] = []
after(() => {
  for (const d of made) {
    try {
      for (const sub of readdirSync(d)) chmodSync(join(d, sub), 0o700)
    } catch {}
    rmSync(d, { recursive: true, force: true })
  }
})

type Outcome = { code: string | null; message: string | null; stdout: string }

// The fixture as an ordinary user: as root, nobody with a temp home of its own; as an
// ordinary user already, as that user.
async function asOrdinaryUser(root: string, blocks: string[]): Promise<Outcome[]> {
  const tmp = mkdtempSync(join(tmpdir(), 'vis-ordinary-tmp-'))
  made.push(tmp)
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    chmodSync(tmp, 0o1777)
    chownSync(root, NOBODY, NOBODY)
  }
  const argv = [process.execPath, host, root, ...blocks]
  const [cmd, ...args] = asRoot
    ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...argv]
    : argv
  const child = spawn(cmd!, args, {
    env: { ...process.env, HOME: tmp, TMPDIR: tmp, VIS_HOME: join(tmp, 'home') },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d
  })
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d
  })
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve))
  assert.equal(status, 0, `the ordinary-user host failed: ${err.slice(-2000)}`)
  return JSON.parse(out.trim().split('\n').at(-1)!) as Outcome[]
}

const writeBelow = (dir: string, from: number, chmod: boolean) => `import os, time
if ${chmod ? 'True' : 'False'} and not os.path.isdir('${dir}'):
    os.mkdir('${dir}')
    os.chmod('${dir}', 0o300)
for i in range(${from}, ${from + 5}):
    with open(f'${dir}/f{i}', 'wb') as f:
        for _ in range(20):
            f.write(b'x' * (1 << 20))
time.sleep(1.5)   # six budget checks while the block runs
print('wrote')`

const mibBelow = (dir: string) =>
  readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).blocks * 512, 0) / (1 << 20)

test('files below a directory the sandbox made unlistable still count against the disk budget', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-unreadable-'))
  made.push(root)
  const [first, second] = await asOrdinaryUser(root, [
    writeBelow('hidden', 0, true),
    writeBelow('hidden', 5, true),
  ])
  const mib = mibBelow(join(root, 'hidden'))
  assert.equal(first!.code, 'session.disk-budget', JSON.stringify(first))
  assert.match(first!.message!, /over the budget of 20 MiB/)
  // Past the budget the second block's writes are refused.
  assert.match(
    second!.message ?? '',
    /writing 'hidden\/f5' is not allowed: the session is past its disk budget/,
  )
  assert.ok(mib <= 20 * 5, `${Math.round(mib)} MiB below the directory against a 20 MiB budget`)
  // The walk gave the directory its owner's read and search bits back, and counted it.
  assert.equal(statSync(join(root, 'hidden')).mode & 0o700, 0o700)
})

test('a directory the host user cannot read (not its own) counts as over the budget: fail closed', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-unreadable-other-'))
  made.push(root)
  // Another user's drop box in the workspace: anyone may add files, no one else may list them.
  // (Made by the test's user: run as root, the host is nobody and this is root's.)
  const drop = join(root, 'drop')
  mkdirSync(drop)
  chmodSync(drop, 0o733)
  const [r] = await asOrdinaryUser(root, [writeBelow('drop', 0, false)])
  assert.equal(r!.code, 'session.disk-budget', JSON.stringify(r))
  if (process.getuid?.() === 0) {
    assert.match(r!.message!, /hold 1 directory the host cannot list or look into/)
    assert.match(r!.message!, /made readable by their owner \(chmod u\+rx\) or deleted/)
    assert.ok(mibBelow(drop) <= 20 * 5, `${Math.round(mibBelow(drop))} MiB below the drop box`)
  } else {
    // Run as an ordinary user the drop box is that user's own: repaired and counted.
    assert.match(r!.message!, /over the budget of 20 MiB/)
  }
})

test('files below a directory the sandbox made listable but not searchable (0o600) count too', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-noexec-'))
  made.push(root)
  const [r] = await asOrdinaryUser(root, [
    `import os, time
os.mkdir('sealed')
f = open('sealed/big', 'wb')
os.chmod('sealed', 0o600)   # before any byte lands: the host never saw the file grow
for _ in range(40):
    f.write(b'x' * (1 << 20))
f.close()
time.sleep(1.5)   # six budget checks while the block runs
print('wrote')`,
  ])
  assert.equal(r!.code, 'session.disk-budget', JSON.stringify(r))
  assert.match(r!.message!, /over the budget of 20 MiB/)
  assert.equal(statSync(join(root, 'sealed')).mode & 0o700, 0o700)
})
