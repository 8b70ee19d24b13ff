// npm's configuration for the npm the host runs (`vis bundle`; src/util/tool-home.ts), both
// directions: with HOME outside every writable place npm keeps the person's ~/.npmrc (nothing is set);
// with HOME, a tool folder under it, or npm's global config inside a root, npm gets a private HOME
// and empty configs, none of them in the root. Real folders and the real root judgement
// (noteSessionRoot marks a root of this process as a session does).
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { npmConfigEnv } from '../../src/util/tool-home.js'
import { writablePlaces } from '../../src/util/writable-roots.js'
import { tempDir } from '../distribution/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})
function fresh(prefix: string): string {
  const d = realpathSync(tempDir(prefix))
  made.push(d)
  return d
}

function withEnv<T>(vars: Record<string, string | undefined>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  try {
    return fn()
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

test("a HOME outside every root keeps the person's npm configuration", () => {
  const home = fresh('vis-npm-home-ok-')
  let made = 0
  const env = withEnv(
    { HOME: home, npm_config_userconfig: undefined, npm_config_globalconfig: undefined },
    () =>
      npmConfigEnv(writablePlaces(), () => {
        made++
        return fresh('vis-npm-private-')
      }),
  )
  assert.deepEqual(env, {})
  assert.equal(made, 0, 'no private HOME is made')
})

test('a HOME that is a session root gives npm a private HOME and an empty user config', () => {
  const home = fresh('vis-npm-home-root-')
  noteSessionRoot(home)
  const priv = fresh('vis-npm-private-')
  const env = withEnv({ HOME: home, npm_config_userconfig: undefined }, () =>
    npmConfigEnv(writablePlaces(), () => priv),
  )
  assert.equal(env.HOME, priv)
  assert.equal(env.npm_config_userconfig, join(priv, '.npmrc'))
  assert.equal(readFileSync(env.npm_config_userconfig!, 'utf8'), '')
  assert.ok(!env.HOME.startsWith(home))
})

test("a global npmrc inside a root is replaced by an empty one, the person's HOME kept", () => {
  const home = fresh('vis-npm-home-kept-')
  const root = fresh('vis-npm-global-root-')
  noteSessionRoot(root)
  mkdirSync(join(root, 'etc'))
  const priv = fresh('vis-npm-private-')
  const env = withEnv(
    { HOME: home, npm_config_globalconfig: join(root, 'etc', 'npmrc'), npm_config_userconfig: undefined },
    () => npmConfigEnv(writablePlaces(), () => priv),
  )
  assert.equal(env.HOME, undefined)
  assert.ok(env.npm_config_globalconfig?.startsWith(priv), JSON.stringify(env))
  assert.equal(readFileSync(env.npm_config_globalconfig!, 'utf8'), '')
})
