// pip under shell() against the lab upstream (lab/lab.ts): the lab serves a PEP 503 simple
// index over HTTPS with a wheel built here, and `python3 -m pip download` in a tool jail
// fetches it through the session's egress proxy when the lab is allowed, and is refused by
// that proxy, naming the refusal, when it is not. Runs on a tree staged with pip
// (lab/pip-tree.ts). Needs root (CI runs as root).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { tempHome } from '../sessions/helpers.js'
import { type Lab, startLab } from './lab/lab.js'
import { pipTree } from './lab/pip-tree.js'

const { home, root } = tempHome('egress-lab-pip')
const WHEEL = 'labpkg-1.0-py3-none-any.whl'

// A wheel by hand: the package and its .dist-info (METADATA, WHEEL, RECORD), zipped by the
// tree's own python3 (`-m zipfile -c`).
function buildWheel(python: string, into: string): Buffer {
  const src = mkdtempSync(join(tmpdir(), 'vis-lab-wheel-'))
  const info = join(src, 'labpkg-1.0.dist-info')
  mkdirSync(join(src, 'labpkg'))
  mkdirSync(info)
  writeFileSync(join(src, 'labpkg', '__init__.py'), 'ORIGIN = "the lab index"\n')
  writeFileSync(join(info, 'METADATA'), 'Metadata-Version: 2.1\nName: labpkg\nVersion: 1.0\n')
  writeFileSync(
    join(info, 'WHEEL'),
    'Wheel-Version: 1.0\nGenerator: vis-lab\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
  )
  writeFileSync(
    join(info, 'RECORD'),
    'labpkg/__init__.py,,\nlabpkg-1.0.dist-info/METADATA,,\nlabpkg-1.0.dist-info/WHEEL,,\nlabpkg-1.0.dist-info/RECORD,,\n',
  )
  execFileSync(python, ['-m', 'zipfile', '-c', join(into, WHEEL), 'labpkg', 'labpkg-1.0.dist-info'], {
    cwd: src,
  })
  rmSync(src, { recursive: true, force: true })
  return readFileSync(join(into, WHEEL))
}

describe('pip download through the egress path', () => {
  let lab: Lab
  let rt: Runtime
  let files: string
  let ca: string
  let wheel: Buffer
  const sessions: Session[] = []

  before(async () => {
    const tree = await pipTree()
    // The runtime (blocks and tool jails) runs on the tree with pip.
    process.env.VIS_PYTHON_HOME = tree
    files = mkdtempSync(join(tmpdir(), 'vis-lab-index-'))
    const pkg = join(files, 'simple', 'labpkg')
    mkdirSync(pkg, { recursive: true })
    wheel = buildWheel(join(tree, 'bin', 'python3'), pkg)
    const sha = createHash('sha256').update(wheel).digest('hex')
    // PEP 503: the root lists the projects, each project page its files (with the hash pip checks).
    writeFileSync(
      join(files, 'simple', 'index.html'),
      '<!DOCTYPE html><html><body><a href="labpkg/">labpkg</a></body></html>\n',
    )
    writeFileSync(
      join(pkg, 'index.html'),
      `<!DOCTYPE html><html><body><a href="${WHEEL}#sha256=${sha}">${WHEEL}</a></body></html>\n`,
    )
    lab = await startLab({ files })
    ca = join(root, 'lab-ca.pem')
    copyFileSync(lab.caFile, ca)
    rt = await createRuntime({ home, pool: { size: 0 } })
  })
  after(async () => {
    for (const s of sessions) await s.dispose().catch(() => undefined)
    await rt?.close()
    await lab?.close()
    rmSync(files, { recursive: true, force: true })
  })

  // The form a model writes: pip as a module of the tool jail's python3, the index by name
  // (HTTPS_PROXY in the jail's environment takes it to the proxy). -vv makes pip print why
  // it skipped an index page, which it otherwise logs at debug level only.
  async function pipDownload(allow: string[], out: string): Promise<{ exit: number; output: string }> {
    const s = await rt.createSession({ roots: [root], shell: true, network: { enabled: true, allow } })
    sessions.push(s)
    const cmd = `python3 -m pip download -vv --no-deps --retries 0 --timeout 30 --cert ${ca} --index-url https://lab.test:8443/files/simple/ -d ${join(root, out)} labpkg 2>&1`
    const r = await s.runBlock(
      `import json\nr = await shell(${JSON.stringify(cmd)}, timeout_secs=180)\nprint(json.dumps([r["exit"], r["stdout"]]))`,
    )
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    const [exit, output] = JSON.parse((r.stdout ?? '').trim().split('\n').pop() ?? '[]') as [number, string]
    return { exit, output }
  }

  test('python3 -m pip download fetches the wheel from the allowed lab index through the proxy', async () => {
    const r = await pipDownload(['lab.test'], 'allowed')
    assert.equal(r.exit, 0, r.output)
    assert.match(r.output, /Saved .*labpkg-1\.0-py3-none-any\.whl/)
    // The bytes the index served, hash-checked by pip against the page's #sha256.
    assert.deepEqual(readFileSync(join(root, 'allowed', WHEEL)), wheel)
  })

  test('with the lab off the list the proxy refuses the tunnel and nothing is downloaded', async () => {
    const r = await pipDownload(['elsewhere.test'], 'refused')
    assert.notEqual(r.exit, 0, r.output)
    // pip logs why it skipped the index page at -vv; the reason is the proxy's own refusal.
    assert.match(
      r.output,
      /ProxyError\('Cannot connect to proxy\.', OSError\('Tunnel connection failed: 403 vis egress refused: lab\.test:8443 is not on the allow list \(elsewhere\.test\)'\)\)/,
    )
    assert.match(r.output, /No matching distribution found for labpkg/)
    assert.doesNotMatch(r.output, /Saved /)
    assert.equal(existsSync(join(root, 'refused', WHEEL)), false)
  })
})
