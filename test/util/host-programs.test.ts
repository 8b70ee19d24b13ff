// The programs the host starts outside every jail come from the system directories (or the
// operator's VIS_HOST_PATH / VIS_BWRAP), never from the process's PATH, and never from a session's
// root: src/util/host-programs.ts. Real programs, real files; the planted ones write a marker.
import assert from 'node:assert/strict'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, afterEach, test } from 'node:test'
import { hostProgramChecks } from '../../src/confinement/host-program-checks.js'
import { openRoots } from '../../src/confinement/root-guard.js'
import { findRipgrep } from '../../src/tools/fs/search.js'
import { jailGitConfig } from '../../src/tools/git/jail-config.js'
import {
  findHostProgram,
  hostProgramPath,
  resetHostProgramsForTest,
  SYSTEM_PROGRAM_DIRS,
} from '../../src/util/host-programs.js'

const saved = { PATH: process.env.PATH, HOME: process.env.HOME, cwd: process.cwd() }
const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})
afterEach(() => {
  process.env.PATH = saved.PATH
  process.env.HOME = saved.HOME
  delete process.env.VIS_HOST_PATH
  delete process.env.VIS_BWRAP
  process.chdir(saved.cwd)
  resetHostProgramsForTest()
})

function temp(label: string): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), `vis-host-programs-${label}-`)))
  made.push(d)
  return d
}

// A program that records that it ran, in a directory of its own.
function plant(dir: string, name: string, marker: string): string {
  mkdirSync(dir, { recursive: true })
  const p = join(dir, name)
  writeFileSync(p, `#!/bin/sh\necho "$0 $*" >> ${marker}\n`)
  chmodSync(p, 0o755)
  return p
}

const systemCopy = (name: string) =>
  SYSTEM_PROGRAM_DIRS.map((d) => join(d, name)).find((p) => existsSync(p)) ??
  assert.fail(`${name} is not installed`)

test('a PATH led by a planted program, and an empty entry (the cwd), never chooses what the host runs', () => {
  const project = temp('project')
  const marker = join(temp('outside'), 'ran')
  const venv = join(project, '.venv', 'bin')
  for (const name of ['git', 'rg', 'du', 'rm', 'bwrap']) {
    plant(venv, name, marker)
    plant(project, name, marker)
  }
  process.env.PATH = `${venv}::${saved.PATH}`
  process.chdir(project)
  // The person's own git identity still reaches the jail: the real git read it.
  const home = temp('home')
  writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Ada Lovelace\n\temail = ada@example.org\n')
  process.env.HOME = home
  const config = jailGitConfig()
  try {
    assert.match(readFileSync(config.file, 'utf8'), /name = "Ada Lovelace"/)
  } finally {
    config.dispose()
  }
  assert.equal(findRipgrep(), systemCopy('rg'))
  for (const name of ['git', 'du', 'rm', 'bwrap']) assert.equal(hostProgramPath(name), systemCopy(name))
  assert.ok(
    !existsSync(marker),
    `a planted program ran: ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''}`,
  )
})

test("a program in a session's root is passed over, even on the operator's search path", () => {
  const root = temp('root')
  const marker = join(temp('outside'), 'ran')
  const planted = plant(join(root, 'bin'), 'git', marker)
  process.env.VIS_HOST_PATH = `${join(root, 'bin')}:/usr/bin:/bin`
  // The operator's search path is honoured while no session has that directory as a root.
  assert.equal(hostProgramPath('git'), planted)
  // A session opens the root (every session's roots pass through openRoots).
  openRoots([root], {}).close()
  const found = findHostProgram('git')
  assert.ok(['/usr/bin/git', '/bin/git'].includes(found.path ?? ''), found.path)
  assert.match(found.skipped ?? '', /lies in the session root/)
  // vis doctor says which binary it is, and that one was passed over.
  const check = hostProgramChecks().find((c) => c.message.startsWith('git: '))
  assert.equal(check?.level, 'warn')
  assert.match(
    check?.message ?? '',
    new RegExp(`passed over ${planted.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
  )
})

test('relative and empty VIS_HOST_PATH entries never count; VIS_BWRAP names bubblewrap', () => {
  const cwd = temp('cwd')
  const marker = join(temp('outside'), 'ran')
  plant(join(cwd, 'bin'), 'du', marker)
  plant(cwd, 'du', marker)
  process.chdir(cwd)
  process.env.VIS_HOST_PATH = ':bin:.:/usr/bin:/bin'
  assert.ok(['/usr/bin/du', '/bin/du'].includes(hostProgramPath('du') ?? ''), hostProgramPath('du'))
  const bwrap = plant(temp('bwrap'), 'bwrap', marker)
  process.env.VIS_BWRAP = bwrap
  assert.equal(findHostProgram('bwrap').path, bwrap)
  assert.equal(findHostProgram('bwrap').source, 'VIS_BWRAP')
  resetHostProgramsForTest()
  process.env.VIS_BWRAP = 'bwrap'
  assert.notEqual(hostProgramPath('bwrap'), 'bwrap')
  assert.ok(!existsSync(marker))
})

test('vis doctor lists the binary each host program resolves to, not the one PATH names', () => {
  const venv = join(temp('venv'), 'bin')
  const marker = join(temp('outside'), 'ran')
  plant(venv, 'git', marker)
  process.env.PATH = `${venv}:${saved.PATH}`
  const checks = hostProgramChecks()
  const git = checks.find((c) => c.message.startsWith('git: '))
  assert.equal(git?.level, 'info')
  assert.ok(git?.message.includes(systemCopy('git')), git?.message)
  assert.ok(!checks.some((c) => c.message.includes(venv)))
})
