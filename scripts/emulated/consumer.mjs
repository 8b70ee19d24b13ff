// Runs under the arm64 Node (qemu-user) in a project that installed vis-runtime from its tarball:
// one confined block with a tool call and a refused write outside the root. Prints one JSON line.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createEngine } from 'vis-runtime'

const work = join(process.cwd(), 'work')
mkdirSync(work, { recursive: true })
writeFileSync(join(work, 'hello.txt'), 'hello from the host\n')
const outside = join(process.cwd(), 'outside.txt')
const out = { arch: process.arch }
const t0 = Date.now()
const e = await createEngine({ home: process.env.VIS_HOME, python: '3.11', pool: { size: 0 } })
const s = await e.createSession({ roots: [work] })
const first = await e.runBlock(s.id, {
  code: 'import platform\nr = await cat("hello.txt")\nprint(platform.machine(), "hello from the host" in r["content"])',
  timeout_ms: 300_000,
})
out.firstBlockMs = Date.now() - t0
out.first = first.block.stdout
out.firstError = first.block.error
const denied = await e.runBlock(s.id, {
  code: `try:\n    open(${JSON.stringify(outside)}, "w").write("x")\n    print("WROTE")\nexcept OSError as err:\n    print(type(err).__name__)`,
  timeout_ms: 120_000,
})
out.outsideWrite = denied.block.stdout
out.outsideError = denied.block.error
await e.close()
console.log(JSON.stringify(out))
