// ATTACK (surface 3, roots): a root that contains the vis-runtime package itself: its checkout,
// or, far more commonly, a project that did `npm install vis-runtime` (the package then lives in
// <root>/node_modules/vis-runtime). SECURITY.md says the mount view holds the package files
// read-only and only re-binds the native parts (build/Release, prebuilds/) so a block cannot
// rewrite them. Everything else of the package is writable through the root: the host's own
// JavaScript (dist/, src/, node_modules/* it imports), the guest runtime every session loads
// (vis-guest/), and the CPython distribution (cpython-dist/).
// The distribution is also run ON THE HOST, unconfined, as the host user: `compileGuestBytecode`
// runs `<dist>/bin/python3 -I -m compileall vis-guest` before the first worker of every host
// process when a guest source is stale. `-I` does not skip site-packages, so a `.pth` file the
// block drops there executes as the host user at the next start (`vis serve` restart, any `vis`
// command, the next library user). Here: the block writes a stale guest module and a `.pth`, a
// new host process starts a session, and the `.pth` writes a marker outside every root.
// The distribution of the runtime's own minor is bound read-only on top, but the other staged
// minors (3.12, 3.13 here) are not: the next host process that uses one of them (a session with
// python '3.12') runs the planted .pth. On the current code the writes succeed and the marker
// appears: code from the sandbox ran on the host, unconfined, as the host user (root here).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { needs } from '../helpers/needs.js'
import { python, tempHome } from '../sessions/helpers.js'

const PKG = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const STALE = join(PKG, 'vis-guest/vis_guest/_zz_attack_stale.py')
const sitePackages = () =>
  readdirSync(join(PKG, 'cpython-dist'))
    .filter((m) => /^3\.\d+$/.test(m))
    .flatMap((m) => {
      const lib = join(PKG, 'cpython-dist', m, 'linux-x86_64-gnu/python/lib', `python${m}`, 'site-packages')
      return existsSync(lib) ? [lib] : []
    })

function cleanup() {
  rmSync(STALE, { force: true })
  const cache = join(PKG, 'vis-guest/vis_guest/__pycache__')
  if (existsSync(cache))
    for (const f of readdirSync(cache)) if (f.startsWith('_zz_attack_stale')) rmSync(join(cache, f))
  for (const sp of sitePackages()) rmSync(join(sp, '_zz_attack.pth'), { force: true })
  for (const f of ['dist/_zz_attack.js', 'node_modules/_zz_attack.js']) rmSync(join(PKG, f), { force: true })
}

// The next host process runs Python 3.12: a checkout set up by the README alone stages 3.11 only.
test('a root that contains the package cannot rewrite the package (host code, guest runtime, distribution)', {
  skip: needs(
    existsSync(join(PKG, 'cpython-dist', '3.12')),
    "CPython 3.12 staged (from pyenv's 3.12)",
    'node bin/vis.js runtime stage --python 3.12',
  ),
}, async () => {
  const { home } = tempHome('attack-root-pkg')
  const markerDir = mkdtempSync(join(tmpdir(), 'vis-attack-marker-'))
  const marker = join(markerDir, 'host-code-ran')
  cleanup()
  const rt = await createRuntime({ home, python, pool: { size: 0 } })
  let out = ''
  try {
    const s = await rt.createSession({ roots: [PKG] })
    const pth = `import os; open(${JSON.stringify(marker)}, 'w').write('uid=%d' % os.getuid())\n`
    const r = await s.runBlock(
      `import os, json
P = ${JSON.stringify(PKG)}
targets = {'stale': ${JSON.stringify(STALE)}, 'js': P + '/dist/_zz_attack.js', 'nm': P + '/node_modules/_zz_attack.js'}
for sp in ${JSON.stringify(sitePackages())}:
    targets[sp] = sp + '/_zz_attack.pth'
done = []
for k, p in targets.items():
    try:
        with open(p, 'w') as f:
            f.write(${JSON.stringify(pth)} if p.endswith('.pth') else '# planted\\n')
        done.append(p[len(P):])
    except OSError as e:
        pass
print(json.dumps(done))`,
      { timeoutMs: 60_000 },
    )
    out = r.stdout ?? ''
    // Reading the package still works from the block.
    const read = await s.runBlock(
      `print('"vis-runtime"' in open(${JSON.stringify(join(PKG, 'package.json'))}).read())`,
    )
    assert.equal(read.stdout, 'True\n', JSON.stringify(read.error))
    await s.dispose()
    // A shell tool jail mounts the roots as well: the package is read-only there too.
    const sh = await rt.createSession({ roots: [PKG], shell: true })
    try {
      const t = await sh.runBlock(
        `r = await shell('touch ${join(PKG, 'dist/_zz_attack.js')} ${STALE}; echo rc=$?')\nprint(r['stdout'] + r['stderr'])`,
      )
      assert.match(t.stdout ?? '', /^rc=1\n[\s\S]*Read-only file system/, JSON.stringify(t))
    } finally {
      await sh.dispose()
    }
  } finally {
    await rt.close()
  }
  try {
    // The next host process: a library user creating a session (as `vis serve` would after a restart).
    const child = join(markerDir, 'next-host.mjs')
    writeFileSync(
      child,
      `import { createRuntime } from ${JSON.stringify(join(PKG, 'src/sessions/create-runtime.ts'))}
const rt = await createRuntime({ home: ${JSON.stringify(mkdtempSync(join(tmpdir(), 'vis-attack-next-')))}, python: '3.12', pool: { size: 0 } })
const s = await rt.createSession({ roots: [${JSON.stringify(markerDir)}] })
await s.runBlock('1')
await s.dispose(); await rt.close()`,
    )
    execFileSync(process.execPath, ['--import', 'tsx', child], { cwd: PKG, stdio: 'pipe', timeout: 120_000 })
    const ran = existsSync(marker) ? readFileSync(marker, 'utf8') : undefined
    assert.equal(
      ran,
      undefined,
      `the sandbox planted ${out.trim()} in the package; the next host process ran its .pth unconfined: ${ran}`,
    )
    assert.equal(out.trim(), '[]', `the sandbox wrote into the package: ${out.trim()}`)
  } finally {
    cleanup()
    rmSync(markerDir, { recursive: true, force: true })
  }
})

// The host file tools run unjailed: the same package is refused to them, with its own code,
// while reading it (a session in a vis-runtime checkout reads its sources) and changing the
// rest of the root still work.
test('the host file tools cannot change the package inside a root, and still read it', async () => {
  const { home } = tempHome('attack-root-pkg-tools')
  const rt = await createRuntime({ home, python, pool: { size: 0 } })
  const own = mkdtempSync(join(tmpdir(), 'vis-attack-pkg-own-'))
  try {
    const s = await rt.createSession({ roots: [PKG, own] })
    try {
      // Absolute paths: the session's workspace (where relative paths start) is not said here.
      const p = (rel: string) => JSON.stringify(join(PKG, rel))
      for (const code of [
        `write(${p('vis-guest/vis_guest/_zz_attack_tool.py')}, 'x')`,
        `write(${p('_zz_attack_top.js')}, 'x')`,
        `patch([{'path': ${p('package.json')}, 'search': '"name"', 'replace': '"nom"'}])`,
        `create_dirs(${p('dist/_zz_attack_dir')})`,
        `delete(${p('dist')})`,
        `move(${p('vis-guest')}, ${p('vis-guest-moved')})`,
        `move(${JSON.stringify(join(own, 'x'))}, ${p('dist/_zz_attack.js')})`,
        `move(${p('package.json')}, ${JSON.stringify(join(own, 'stolen.json'))})`,
      ]) {
        writeFileSync(join(own, 'x'), 'x')
        const r = await s.runBlock(code)
        assert.match(
          r.error?.message ?? '',
          /the vis-runtime package, which sessions may read but never change/,
          `${code}: ${JSON.stringify(r.error ?? r.result)}`,
        )
      }
      assert.equal(existsSync(join(PKG, '_zz_attack_top.js')), false)
      assert.equal(existsSync(join(PKG, 'vis-guest/vis_guest/_zz_attack_tool.py')), false)
      assert.equal(existsSync(join(PKG, 'dist/_zz_attack_dir')), false)
      assert.equal(existsSync(join(PKG, 'vis-guest')), true)
      assert.match(readFileSync(join(PKG, 'package.json'), 'utf8'), /"name": "vis-runtime"/)
      const ok = await s.runBlock(
        `print('"vis-runtime"' in str(cat(${JSON.stringify(join(PKG, 'package.json'))})), exists(${JSON.stringify(join(PKG, 'dist'))}))
write(${JSON.stringify(join(own, 'mine.txt'))}, 'mine')
print(open(${JSON.stringify(join(own, 'mine.txt'))}).read())`,
      )
      assert.equal(ok.error, undefined, JSON.stringify(ok.error))
      assert.match(ok.stdout ?? '', /^True .*\nmine\n$/)
    } finally {
      await s.dispose()
    }
  } finally {
    await rt.close()
    rmSync(join(PKG, 'vis-guest/vis_guest/_zz_attack_tool.py'), { force: true })
    rmSync(join(PKG, 'dist/_zz_attack_dir'), { recursive: true, force: true })
    rmSync(join(PKG, '_zz_attack_top.js'), { force: true })
    rmSync(own, { recursive: true, force: true })
  }
})
