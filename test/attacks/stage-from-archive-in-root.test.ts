// Attack (thirteenth outsider pass; surface: what the host later RUNS from a place a sandbox writes). The
// eleventh pass refuses a `file://` CPython kit inside a writable root (`dist.source-in-root`: "the host
// unpacks it into the per-user cache ... and runs its interpreter"), but `vis runtime stage --from-archive
// FILE` (src/distribution/stage-archive.ts, the README's `npx vis runtime stage --from-archive
// ./cpython-3.12.1-linux-x86_64-gnu.tar.gz`, a path in the directory the person works in) takes any file:
// no root check, and it reads the file three times (unpack, then sha256, then the copy into archives/), so
// even the recorded checksum need not be that of what was unpacked. A block in a session on W writes
// W/cpython-3.11-linux-x86_64-gnu.tar.gz (its own tree: bin/python3.11 a shell script, its own
// libpython3.11.so.1.0, os.py); staging takes it, and the staged tree is one the host runs unconfined (its
// executable for the guest bytecode compile, its libpython loaded by `vis python` and every worker).
//
// Reproduction: a runtime with a session on W (live); the block builds the archive with tarfile in W; the
// test calls stageFromArchive(W/...tar.gz, { out }) as `vis runtime stage --from-archive` does. Expected:
// refused with dist.source-in-root (as the file:// kit is), nothing staged under out.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { stageFromArchive } from '../../src/distribution/stage-archive.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-stage-archive-'))
let rt: Runtime | undefined
before(async () => {
  const { home } = tempHome('attack-stage-archive')
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt?.close()
  rmSync(base, { recursive: true, force: true })
})

test('vis runtime stage --from-archive refuses an archive inside a live session root', async () => {
  const W = join(base, 'work')
  const out = join(base, 'staged')
  mkdirSync(W)
  const s = await rt!.createSession({ roots: [W] })
  try {
    const r = await s.runBlock(
      `import io, tarfile, time
files = {
    'python/bin/python3.11': b'#!/bin/sh\\necho "the block\\'s interpreter, run by the host: $*" >> "$0.ran"\\n',
    'python/lib/libpython3.11.so.1.0': b'not the real libpython: the block chose these bytes',
    'python/lib/python3.11/os.py': b'# the block\\'s os module\\n',
    'python/lib/python3.11/encodings/__init__.py': b'',
    'python/include/python3.11/patchlevel.h': b'#define PY_VERSION "3.11.99"\\n',
}
with tarfile.open(${JSON.stringify(join(W, 'cpython-3.11-linux-x86_64-gnu.tar.gz'))}, 'w:gz') as t:
    for name, data in files.items():
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mode = 0o755
        info.mtime = int(time.time())
        t.addfile(info, io.BytesIO(data))
print('archive written')`,
      { timeoutMs: 60_000 },
    )
    assert.match(r.stdout ?? '', /archive written/, JSON.stringify(r))
    let refused: unknown
    let staged: string | undefined
    try {
      const res = await stageFromArchive(join(W, 'cpython-3.11-linux-x86_64-gnu.tar.gz'), {
        out,
        archive: false,
      })
      staged = res.root
    } catch (err) {
      refused = err
    }
    const exe = staged === undefined ? '' : join(staged, 'bin', 'python3.11')
    assert.ok(
      refused !== undefined,
      `an archive the block wrote in its root W was staged as a CPython the host runs: ${staged} ` +
        `(its bin/python3.11: ${existsSync(exe) ? JSON.stringify(readFileSync(exe, 'utf8')) : '?'})`,
    )
    assert.equal((refused as { code?: string }).code, 'dist.source-in-root', String(refused))
    assert.ok(!existsSync(join(out, '3.11')), 'nothing staged')
  } finally {
    await s.dispose()
  }
})
