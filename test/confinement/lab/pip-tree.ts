// A CPython 3.11 tree carrying pip (Debian's python3-pip, `vis runtime stage --with pip`),
// for the lab's `python3 -m pip` case. The tree the package ships has no pip (the stager
// strips ensurepip); CI stages pip into the batteries tree (.cache/batteries-dist,
// .ci/run), and elsewhere it is staged here into a temp dir removed at exit (about 40 s).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findLocalPython } from '../../../src/distribution/discover.js'
import { defaultDistDir, stagedTreeRoot } from '../../../src/distribution/layout.js'
import { readDistManifest } from '../../../src/distribution/manifest.js'
import { parseWith } from '../../../src/distribution/packages/sets.js'
import { platformTag } from '../../../src/distribution/platform.js'
import { stageFromPython } from '../../../src/distribution/stage.js'
import { packageRoot } from '../../../src/util/home.js'

const MINOR = '3.11'

function hasPip(root: string): boolean {
  try {
    return readDistManifest(join(root, 'vis-dist.json')).requested?.includes('pip') ?? false
  } catch {
    return false
  }
}

// The distribution root (python/) of a tree with pip.
export async function pipTree(): Promise<string> {
  for (const dir of [join(packageRoot, '.cache', 'batteries-dist'), defaultDistDir()]) {
    const staged = stagedTreeRoot(dir, MINOR, platformTag())
    if (hasPip(staged)) return staged
  }
  const py = findLocalPython(MINOR)
  if (!py) throw new Error(`the pip lab case needs a local shared-library CPython ${MINOR}`)
  const out = mkdtempSync(join(tmpdir(), 'vis-pip-tree-'))
  process.on('exit', () => rmSync(out, { recursive: true, force: true }))
  // The .debs are cached outside the temp tree (shared with the batteries tests' cache).
  const debs = join(tmpdir(), 'vis-batteries-debs')
  mkdirSync(debs, { recursive: true })
  symlinkSync(debs, join(out, '.debs'))
  const r = await stageFromPython(py.executable, { out, packages: parseWith(['pip']), archive: false })
  return r.root
}
