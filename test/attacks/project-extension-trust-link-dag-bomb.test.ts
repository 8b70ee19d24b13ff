// Attack (ninth outsider pass; SECURITY.md Roots, "A project's extensions are loaded only once a person
// trusted their content": the trust check hashes the folder "links followed", and "what loads is the copy
// trust made in the vis home, so the target stays the person's to edit" — a linked `.vis/extensions`
// whose target lies in a session's root is expected to be written by that session). The check
// (src/extensions/trust.ts folderDigest/copyIfTrusted) runs on the host at every discovery (`vis run`,
// `vis chat`, `vis serve`, `vis ext list`, `vis doctor`), synchronously, and copies every directory it
// walks into `<vis home>/cache/trusted-extensions/.tmp-*` while hashing. Its bounds are 5000 FILES and 32
// levels; directories are not counted. A block plants a chain of 12 folders, each holding eight links
// to the next (`d<i>/a -> ../d<i+1>` ... `d<i>/h`; 12 folders and 96 links, no file, nothing against
// the disk budget) and eight links to the chain's head in the extension folder. No path is deeper than
// 12 and no loop exists, so neither bound fires: the host walks 8^12 (about 7e10) directory paths and
// creates a directory in the vis home for each one. `vis ext list` (and every engine start in that project) never
// returns (the event loop of `vis serve` is blocked in a synchronous walk at start-up) while it fills the
// vis home's filesystem with directories (inode exhaustion of the host's home).
//
// Reproduction: app/.vis/extensions -> ../../shared/vis-ext, holding hello.py, trusted with
// `vis ext trust --project app`. A session with root `shared` (any other session that may write there)
// runs one block that makes shared/chain/d1..d12 and the links above. The person then runs
// `VIS_HOME=home vis ext list --project app`: on the current code it does not answer; the test stops it
// once it has made 20000 directories in the vis home (or after 20 s), and fails. Measured unstopped: about
// 300000 directories in 20 s, never finishing. A fix: count every
// directory (and every link followed) against a bound, or refuse links to directories, and say so.
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { plantInSession, trustedSharedExtension, untrustedProject } from './trusted-project-extension.js'
import { mustAnswer, saidMatching, watchedExtList } from './watched-vis.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-ext-dag-'))
after(() => rmSync(base, { recursive: true, force: true }))

// Far more directories than any extension folder a person reviews.
const MANY_DIRS = 20_000

// Directories under dir (a walk that does not follow links: the copy is made of real directories).
function countDirs(dir: string, cap = 2_000_000): number {
  let n = 0
  const stack = [dir]
  while (stack.length > 0 && n < cap) {
    const d = stack.pop()!
    let entries: import('node:fs').Dirent[]
    try {
      entries = readdirSync(d, { withFileTypes: true })
    } catch {
      continue
    }
    for (const e of entries) {
      if (e.isDirectory()) {
        n++
        stack.push(join(d, e.name))
      }
    }
  }
  return n
}

// One block of a session on `root` plants the chain under chainDir (12 folders, each with eight links to
// the next) and eight links to its head in extDir. No path crosses more than 13 links, so the kernel's
// 40-link limit never stops a lookup, even counted twice (an RCU walk retried).
async function plantChain(home: string, root: string, chainDir: string, extDir: string): Promise<void> {
  await plantInSession(
    home,
    root,
    [
      'import os',
      `chain = ${JSON.stringify(chainDir)}`,
      `ext = ${JSON.stringify(extDir)}`,
      'names = "abcdefgh"',
      'for i in range(1, 13):',
      "    os.makedirs(f'{chain}/d{i}', exist_ok=True)",
      'for i in range(1, 12):',
      '    for n in names:',
      "        os.symlink(f'../d{i + 1}', f'{chain}/d{i}/{n}')",
      'os.makedirs(ext, exist_ok=True)',
      'for n in names:',
      "    os.symlink(os.path.relpath(chain + '/d1', ext), ext + '/' + n)",
      "print('planted')",
    ],
    /planted/,
  )
}

// The person runs `vis ext list` in the project. It must answer (the folder changed or is not
// trusted: not loaded) and leave no copy of the bomb in the vis home.
async function personListsExtensions(home: string, project: string): Promise<void> {
  const vis = watchedExtList(home, project)
  // Polled: done, or past a bound no reviewed folder comes near (the test stops the walk there, so
  // what it leaves to clean up stays small).
  const copies = join(home, 'cache', 'trusted-extensions')
  const started = Date.now()
  let made = 0
  await mustAnswer(
    vis,
    20_000,
    50,
    () =>
      `\`vis ext list\` had not answered after ${((Date.now() - started) / 1000).toFixed(1)} s: the host is walking ` +
      `8^12 (about 7e10) directory paths the session linked into the extension folder, and had made ` +
      `${made > MANY_DIRS ? `more than ${MANY_DIRS}` : made} directories in the vis home's cache (stopped here)`,
    {
      stop: () => {
        made = countDirs(copies, MANY_DIRS + 1)
        return made > MANY_DIRS
      },
      cleanup: () => rmSync(copies, { recursive: true, force: true }),
    },
  )
  await saidMatching(vis, /not loaded|cannot|more than/i)
  assert.ok(countDirs(copies) < 1000, 'the vis home holds the walked directories')
}

test('a session cannot make the host walk and copy 8^12 directories through links in a linked project extension folder', async () => {
  const { home, project, shared, ext } = trustedSharedExtension(base)
  // Another session that may write the shared folder plants the chain.
  await plantChain(home, shared, join(shared, 'chain'), ext)
  await personListsExtensions(home, project)
})

// The same without any link of the person's: most projects have no `.vis` folder, and the jail masks
// `<root>/.vis/extensions` only where it exists when the jail starts. A session on the project of
// another engine (a library's runtime, a `vis serve` started elsewhere) makes `.vis/extensions` itself.
// The folder is untrusted, yet the check walks and copies it all the same, before it can say so.
test('a session cannot make `vis ext list` in an untrusted project walk 8^12 directories it linked into a new .vis/extensions', async () => {
  const { home, project } = untrustedProject(base, '2')
  await plantChain(home, project, join(project, 'chain'), join(project, '.vis', 'extensions'))
  await personListsExtensions(home, project)
})
