// Runs in a temporary project that installed vis-runtime from its tarball: what a new user
// does first, on each Python minor named on the command line. Prints one JSON line per minor.
//   node consumer.mjs 3.11 3.12 ...   (VIS_HOME, VIS_PYTHON_DIST_URL from the environment)
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createEngine } from 'vis-runtime'

const home = process.env.VIS_HOME
const work = join(process.cwd(), 'work')
mkdirSync(work, { recursive: true })
writeFileSync(join(work, 'hello.txt'), 'hello from the host\n')
// Outside the session's root: the jail must keep it out of reach.
const secret = join(process.cwd(), 'secret.txt')
writeFileSync(secret, 'not for the guest\n')

async function waitFor(pred, what, ms = 60_000) {
  const end = Date.now() + ms
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

for (const minor of process.argv.slice(2)) {
  const out = { minor }
  const e1 = await createEngine({ home, python: minor, pool: { size: 0 } })
  const s = await e1.createSession({ roots: [work], shell: true })
  // A confined block with a tool call: the host's cat reads the root for the guest.
  const first = await e1.runBlock(s.id, {
    code: 'import sys\nr = await cat("hello.txt")\nprint("%d.%d" % sys.version_info[:2], "hello from the host" in r["content"])',
    timeout_ms: 120_000,
  })
  out.firstResultAt = Date.now()
  out.first = first.block.stdout
  out.firstError = first.block.error
  const denied = await e1.runBlock(s.id, {
    code: `try:\n    open(${JSON.stringify(secret)}).read()\n    print("READ")\nexcept Exception as e:\n    print(type(e).__name__)`,
  })
  out.secret = denied.block.stdout
  // A jailed tool process (the shell runs under jail-init with only its own files readable).
  const sh = await e1.runBlock(s.id, {
    code: 'r = await shell("echo jailed; cat hello.txt")\nprint(r["exit"], r["stdout"])',
  })
  out.shell = sh.block.stdout
  out.shellError = sh.block.error
  // An interrupt: the loop prints, then is stopped; the session keeps working.
  const seen = []
  const off = e1.subscribe(s.id, (ev) => seen.push(ev.type))
  const looping = await e1.submitBlock(s.id, {
    code: 'import time\nprint("looping", flush=True)\nwhile True:\n    time.sleep(0.02)',
    timeout_ms: 120_000,
  })
  await waitFor(() => seen.includes('output'), 'the loop to print')
  out.interrupt = await e1.interrupt(s.id)
  const stopped = await looping.done
  off()
  out.interruptedError = stopped.error?.code
  // A definition to restore after the host restarts.
  const def = await e1.runBlock(s.id, { code: 'def tripled(x):\n    return 3 * x\nBASE = 14' })
  out.defError = def.block.error
  await e1.close()
  const e2 = await createEngine({ home, python: minor, pool: { size: 0 } })
  const events = []
  const off2 = e2.subscribe(s.id, (ev) => events.push(ev.type))
  const again = await e2.runBlock(s.id, { code: 'tripled(BASE)' })
  off2()
  out.restored = again.block.result
  out.restoredError = again.block.error
  out.restoreEvents = events
  await e2.close()
  console.log(JSON.stringify(out))
}
