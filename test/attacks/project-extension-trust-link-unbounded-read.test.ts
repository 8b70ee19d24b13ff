// Attack (ninth outsider pass; SECURITY.md Roots, "A project's extensions are loaded only once a person
// trusted their content": the trust check hashes the folder "links followed" and copies each file into
// the vis home "read once through one fd"; the target of a linked `.vis/extensions` "stays the person's to
// edit", so a session whose root holds it is expected to write there). SECURITY.md puts "exhausting the
// host's memory ... or disk" in scope, and every other file the host reads from a place a sandbox writes
// (AGENTS.md, prompt templates, project metadata, .gitignore) is capped and refused past the cap. The
// trust check (src/extensions/trust.ts folderDigest) caps the number of files and the depth, never a
// file's size: it `readFileSync`s each whole into the host's memory and writes it to
// `<vis home>/cache/trusted-extensions/.tmp-*`, at every discovery (`vis run`, `vis chat`, `vis serve`,
// `vis ext list`, `vis doctor`), whether or not the folder is trusted. A block plants ONE link,
// `notes.txt -> /proc/self/pagemap`: a "regular file" of size 0 that, opened by the host, is the host
// process's own page map, 8 bytes per page of its address space (about 256 GiB). `readFileSync` reads it
// to the end into memory: the host process grows by hundreds of MiB a second until the machine runs out
// (measured: 1.5 GiB within 5 s, still growing). Links to large host files (5000 of them to one big
// binary) fill the vis home's disk the same way.
//
// Reproduction: app/.vis/extensions -> ../../shared/vis-ext holding hello.py, trusted with
// `vis ext trust --project app`. A session with root `shared` runs
// `os.symlink('/proc/self/pagemap', 'shared/vis-ext/notes.txt')`. The person runs
// `VIS_HOME=home vis ext list --project app`: its resident memory passes 1 GiB (the test kills it there).
// A fix: bound each file and the total the check reads (and copies), and refuse the folder past it.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import {
  plantInExtensionFolder,
  trustedSharedExtension,
  untrustedProject,
} from './trusted-project-extension.js'
import { mustAnswer, saidMatching, watchedExtList } from './watched-vis.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-ext-read-'))
after(() => rmSync(base, { recursive: true, force: true }))

const GiB = 1 << 30

function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : 0
  } catch {
    return 0
  }
}

// One block of a session on `root` links `<extDir>/notes.txt` to /proc/self/pagemap.
async function plantLink(home: string, root: string, extDir: string): Promise<void> {
  await plantInExtensionFolder(
    home,
    root,
    extDir,
    ["os.symlink('/proc/self/pagemap', ext + '/notes.txt')", "print('planted')"],
    /planted/,
  )
}

// The person runs `vis ext list` in the project: it must answer without reading the endless file.
async function personListsExtensions(home: string, project: string): Promise<void> {
  const vis = watchedExtList(home, project)
  let peak = 0
  await mustAnswer(
    vis,
    60_000,
    20,
    () =>
      `\`vis ext list\` grew to ${(peak / GiB).toFixed(2)} GiB reading /proc/self/pagemap through the session's link ` +
      '(killed here; unchecked it reads about 256 GiB into the host process)',
    {
      stop: () => {
        peak = Math.max(peak, rssBytes(vis.pid))
        return peak >= GiB
      },
    },
  )
  assert.ok(peak < GiB / 2, `the host process grew to ${(peak / GiB).toFixed(2)} GiB`)
  await saidMatching(vis, /not loaded|cannot|larger|more than/i)
}

test('a session cannot make the host read an endless file through a link in a linked project extension folder', async () => {
  const { home, project, shared, ext } = trustedSharedExtension(base)
  await plantLink(home, shared, ext)
  await personListsExtensions(home, project)
})

// The same without any link of the person's: most projects have no `.vis` folder, and the jail masks
// `<root>/.vis/extensions` only where it exists when the jail starts. A session on the project of
// another engine (a library's runtime, a `vis serve` started elsewhere) makes `.vis/extensions` itself;
// the folder is untrusted, yet the check reads and copies every file before it can say so.
test('a session cannot make `vis ext list` in an untrusted project read an endless file it linked into a new .vis/extensions', async () => {
  const { home, project } = untrustedProject(base, '2')
  await plantLink(home, project, join(project, '.vis', 'extensions'))
  await personListsExtensions(home, project)
})
