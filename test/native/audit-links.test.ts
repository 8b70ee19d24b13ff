// The audit hook and symlinks a root holds (issue 30, section 8): deleting or renaming the
// link itself never touches its target, so it is allowed when the link sits in the roots,
// whatever it points to; opening through it, and anything whose directory is outside, is not.
import assert from 'node:assert/strict'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { before, test } from 'node:test'
import { loadPython, type Outcome, type PythonRuntime } from '../../src/native/index.js'
import { tempHome } from './helpers.js'

tempHome()
let rt: PythonRuntime
const base = realpathSync(mkdtempSync(join(tmpdir(), 'vis-audit-links-')))
const rw = join(base, 'rw')
const outside = join(base, 'outside')
const secret = join(outside, 'secret.txt')
const py = (s: string) => JSON.stringify(s)

before(async () => {
  for (const d of [rw, outside, join(outside, 'dir')]) mkdirSync(d, { recursive: true })
  writeFileSync(secret, 'secret')
  writeFileSync(join(outside, 'dir', 'victim.txt'), 'victim')
  rt = await loadPython()
  rt.installPolicy({
    readOnly: [],
    readWrite: [rw],
    network: { enabled: false },
    processes: false,
    ctypes: false,
  })
})

function denied(o: Outcome, pattern: RegExp): void {
  assert.equal(o.ok, false, `expected a denial, got ${JSON.stringify(o)}`)
  if (o.ok) return
  assert.equal(o.error.type, 'PermissionError', JSON.stringify(o.error))
  assert.match(o.error.message, pattern)
}

function allowed(o: Outcome): void {
  assert.equal(o.ok, true, JSON.stringify(o))
}

function link(name: string, target: string): string {
  const p = join(rw, name)
  symlinkSync(target, p)
  return p
}

const untouched = () => {
  assert.equal(readFileSync(secret, 'utf8'), 'secret', 'the target outside is untouched')
  assert.equal(readFileSync(join(outside, 'dir', 'victim.txt'), 'utf8'), 'victim')
}

test('os.remove / os.unlink / Path.unlink of an in-root link to outside delete the link, not the target', async () => {
  const a = link('a', secret)
  const b = link('b', secret)
  const c = link('c', join(outside, 'dir'))
  const d = link('d', join(outside, 'missing.txt'))
  allowed(
    await rt.exec(
      `import os, pathlib\nos.remove(${py(a)})\nos.unlink(${py(b)})\npathlib.Path(${py(c)}).unlink()`,
    ),
  )
  // Relative to a directory descriptor, as shutil.rmtree does it.
  allowed(
    await rt.exec(
      `import os\nfd = os.open(${py(rw)}, os.O_RDONLY)\ntry:\n    os.unlink("d", dir_fd=fd)\nfinally:\n    os.close(fd)`,
    ),
  )
  for (const p of [a, b, c, d]) assert.equal(existsSync(p) || lstatOrNull(p) !== null, false, `${p} is gone`)
  untouched()
})

test('shutil.rmtree of an in-root tree holding links to outside removes the tree only', async () => {
  // One level: the hook sees os.open's "open" event without its dir_fd, so rmtree cannot
  // descend into nested directories under the hook at all (unrelated to links).
  mkdirSync(join(rw, 'tree'), { recursive: true })
  symlinkSync(secret, join(rw, 'tree', 'l1'))
  symlinkSync(join(outside, 'dir'), join(rw, 'tree', 'l2'))
  allowed(await rt.exec(`import shutil\nshutil.rmtree(${py(join(rw, 'tree'))})`))
  assert.equal(existsSync(join(rw, 'tree')), false)
  untouched()
})

test('os.rename / os.replace / shutil.move of an in-root link within the roots move the link itself', async () => {
  const a = link('ra', secret)
  const b = link('rb', secret)
  const c = link('rc', join(outside, 'dir'))
  mkdirSync(join(rw, 'sub'), { recursive: true })
  allowed(
    await rt.exec(
      `import os, shutil\nos.rename(${py(a)}, ${py(join(rw, 'sub', 'ra2'))})\nos.replace(${py(b)}, ${py(join(rw, 'rb2'))})\nshutil.move(${py(c)}, ${py(join(rw, 'sub', 'rc2'))})`,
    ),
  )
  for (const p of [join(rw, 'sub', 'ra2'), join(rw, 'rb2'), join(rw, 'sub', 'rc2')])
    assert.equal(lstatSync(p).isSymbolicLink(), true, `${p} is the moved link`)
  // A rename onto an in-root link replaces the link, not what it points to.
  writeFileSync(join(rw, 'plain.txt'), 'plain')
  allowed(await rt.exec(`import os\nos.replace(${py(join(rw, 'plain.txt'))}, ${py(join(rw, 'rb2'))})`))
  assert.equal(readFileSync(join(rw, 'rb2'), 'utf8'), 'plain')
  untouched()
})

test('still refused: opening through the link, a destination outside, a directory that is a link to outside', async () => {
  const l = link('keep', secret)
  denied(await rt.exec(`open(${py(l)})`), /reading .*keep' \(resolves to '.*outside\/secret\.txt'\)/)
  denied(await rt.exec(`open(${py(l)}, "w")`), /writing .*outside the read-write roots/)
  denied(await rt.exec(`import os\nos.truncate(${py(l)}, 0)`), /os\.truncate/)
  // The link moved out of the roots: the destination's directory is outside.
  denied(
    await rt.exec(`import os\nos.rename(${py(l)}, ${py(join(outside, 'moved'))})`),
    /outside the read-write roots \[os\.rename\]/,
  )
  denied(
    await rt.exec(`import shutil\nshutil.move(${py(l)}, ${py(join(outside, 'moved'))})`),
    /\[shutil\.move\]/,
  )
  // Through a link to a directory outside, the path names a file outside: deleting or
  // renaming it would change the outside.
  const dirLink = link('dirlink', join(outside, 'dir'))
  denied(
    await rt.exec(`import os\nos.remove(${py(join(dirLink, 'victim.txt'))})`),
    /outside\/dir\/victim\.txt.*\[os\.remove\]/,
  )
  denied(
    await rt.exec(`import os\nos.rename(${py(join(dirLink, 'victim.txt'))}, ${py(join(rw, 'stolen.txt'))})`),
    /\[os\.rename\]/,
  )
  denied(
    await rt.exec(`import os\nos.rename(${py(join(rw, 'rb2'))}, ${py(join(dirLink, 'planted'))})`),
    /\[os\.rename\]/,
  )
  denied(await rt.exec(`import os\nos.remove(${py(`${dirLink}/`)})`), /\[os\.remove\]/)
  denied(await rt.exec(`import shutil\nshutil.rmtree(${py(dirLink)})`), /\[shutil\.rmtree\]/)
  // Files outside are still not deletable by their own path.
  denied(await rt.exec(`import os\nos.remove(${py(secret)})`), /\[os\.remove\]/)
  assert.equal(lstatSync(l).isSymbolicLink(), true, 'the refused link is still there')
  assert.equal(existsSync(join(outside, 'moved')), false)
  assert.equal(existsSync(join(rw, 'stolen.txt')), false)
  untouched()
})

function lstatOrNull(p: string) {
  try {
    return lstatSync(p)
  } catch {
    return null
  }
}
