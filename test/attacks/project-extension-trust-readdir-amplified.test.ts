// Attack (tenth outsider pass; SECURITY.md Roots, "A project's extensions are loaded only once a person
// trusted their content": the trust walk "counts every entry (files and folders, a folder reached
// through a link counted each time: 5000), 32 levels" so that a folder a session planted is "refused
// rather than hashed"). The walk (src/extensions/trust.ts folderDigest) counts a folder's entries one
// by one as it visits them, but only AFTER `readdirSync` has read and sorted every name the folder holds,
// and it descends into the first entry before counting the rest. A block plants, in a new
// `.vis/extensions` of the project (the jail masks it only where it exists when the jail starts), one
// link `a -> .` (sorted first) beside 200 000 empty files with 200-character names (no allocated
// block beyond the folder's own ~60 MB, well inside the disk budget). The host then re-reads and
// re-sorts all 200 000 names at each of 33 levels (`a/a/a/...`) before the depth bound fires, having
// counted 33 entries: about 6.6 million names, synchronously, at every discovery (`vis run`, `vis chat`,
// `vis serve` and `vis mcp` started in the project, `vis ext list`, `vis doctor`, an extension reload),
// with the event loop blocked throughout. Measured on this machine: 52 s for one walk (`vis ext list`
// does not answer for about a minute), where a walk bounded by the 5000 entries it promises reads
// at most 5000 names and answers at once.
//
// Reproduction: a session on `app` runs one block that makes app/.vis/extensions, the link `a -> .`
// in it and 200 000 empty files named 'z'*200 + a number. The person then runs
// `VIS_HOME=home vis ext list --project app`: it must answer (the folder is untrusted, or refused as
// too large) within 15 s; on the current code it is still walking then, and the test fails. A fix:
// count names while reading the folder (opendir, stopping past the bound) rather than after reading
// and sorting all of them.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { plantInExtensionFolder, untrustedProject } from './trusted-project-extension.js'
import { mustAnswer, saidMatching, watchedExtList } from './watched-vis.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-ext-readdir-'))
after(() => rmSync(base, { recursive: true, force: true }))

const NAMES = 200_000
// `vis ext list` on a folder of at most 5000 entries answers in a second or two here; the attack's
// walk takes about a minute.
const ANSWER_MS = 15_000

async function plant(home: string, root: string, extDir: string): Promise<void> {
  await plantInExtensionFolder(
    home,
    root,
    extDir,
    [
      "os.symlink('.', os.path.join(ext, 'a'))",
      "pre = 'z' * 200",
      `for i in range(${NAMES}):`,
      "    os.close(os.open(os.path.join(ext, f'{pre}{i:08d}'), os.O_CREAT | os.O_WRONLY, 0o600))",
      "print('planted', len(os.listdir(ext)))",
    ],
    new RegExp(`planted ${NAMES + 1}`),
    { timeoutMs: 180_000 },
  )
}

test('a session cannot make the extension trust walk read and sort a planted folder of 200 000 names once per level', {
  timeout: 600_000,
}, async () => {
  const { home, project } = untrustedProject(base)
  await plant(home, project, join(project, '.vis', 'extensions'))

  const vis = watchedExtList(home, project)
  const started = Date.now()
  await mustAnswer(
    vis,
    ANSWER_MS,
    50,
    () =>
      `\`vis ext list\` had not answered after ${((Date.now() - started) / 1000).toFixed(1)} s: the trust walk ` +
      `re-reads and sorts the ${NAMES} names the session planted at each of 33 levels of the link a -> . ` +
      'before its 5000-entry and 32-level bounds refuse the folder (stopped here)',
  )
  // Answered: the planted folder did not load, and said why.
  await saidMatching(vis, /not loaded|cannot|more than|NOT loaded/i)
})
