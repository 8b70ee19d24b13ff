// The private HOME's `.vis` (src/mcp-client/server-home.ts linkUserVisHome): a vis started as a stdio
// server takes the private HOME for ~, so its ~/.vis must be the user's default vis home, where the
// homes registry and live jails are. Made when the private HOME is first used, kept on later starts,
// and whatever else an earlier version left there is moved aside (never deleted) for the link. The
// attack is test/attacks/mcp-private-home-unmasks-vis-home.test.ts.
import assert from 'node:assert/strict'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { serverHomeEnv } from '../../src/mcp-client/server-home.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { tempDir } from './helpers.js'

const savedHome = process.env.HOME
after(() => {
  process.env.HOME = savedHome
})

test("the private HOME's .vis links to the user's default vis home, made 0700 when missing", () => {
  const base = realpathSync(tempDir('home-link'))
  const H = join(base, 'home')
  const visHome = join(base, 'vis-home')
  mkdirSync(H)
  // The person's HOME is a session root of this process: servers get the private HOME.
  process.env.HOME = H
  noteSessionRoot(H)
  const env = serverHomeEnv({}, visHome)
  const dir = join(visHome, 'mcp-servers', 'home')
  assert.equal(env.HOME, dir)
  assert.equal(readlinkSync(join(dir, '.vis')), join(H, '.vis'))
  assert.equal(statSync(join(H, '.vis')).mode & 0o777, 0o700)
  // Again: the same link, nothing set aside.
  serverHomeEnv({}, visHome)
  assert.equal(readlinkSync(join(dir, '.vis')), join(H, '.vis'))
  assert.deepEqual(
    readdirSync(dir).filter((n) => n.startsWith('.vis.')),
    [],
  )
  rmSync(base, { recursive: true, force: true })
})

test('a .vis folder an earlier server made in the private HOME is kept aside and replaced by the link', () => {
  const base = realpathSync(tempDir('home-link-old'))
  const H = join(base, 'home')
  const visHome = join(base, 'vis-home')
  const dir = join(visHome, 'mcp-servers', 'home')
  mkdirSync(H)
  mkdirSync(join(dir, '.vis'), { recursive: true })
  writeFileSync(join(dir, '.vis', 'vis.db'), 'the inner vis of an earlier version')
  process.env.HOME = H
  noteSessionRoot(H)
  serverHomeEnv({}, visHome)
  assert.ok(lstatSync(join(dir, '.vis')).isSymbolicLink())
  assert.equal(readlinkSync(join(dir, '.vis')), join(H, '.vis'))
  const aside = readdirSync(dir).filter((n) => n.startsWith('.vis.before-link-'))
  assert.equal(aside.length, 1, readdirSync(dir).join(' '))
  assert.equal(readFileSync(join(dir, aside[0]!, 'vis.db'), 'utf8'), 'the inner vis of an earlier version')
  assert.ok(existsSync(join(H, '.vis')))
  rmSync(base, { recursive: true, force: true })
})
