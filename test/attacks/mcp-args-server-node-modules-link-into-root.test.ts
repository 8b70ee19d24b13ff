// Attack (eighteenth outsider pass; surface: checkArgs in src/mcp-client/launch.ts, judge-word.ts). An
// argument is judged by where it leads (links followed), but not by what the program it names loads next
// to it. A Node server installed outside every root with a local dependency (`npm install ../work/lib`,
// a `file:` dependency, or `npm link lib`) has `node_modules/lib`, a link into the session root: the
// launch check passes `node <outside>/srv/index.js`, and Node's `require('lib')` loads the block's code.
// (The same shape: a python server's venv with an editable install, mcp-venv-editable-pth-in-root.)
//
// Reproduction: a session on W; <outside>/srv/index.js requiring `lib`, <outside>/srv/node_modules/lib a
// link to W/lib (what npm makes for a `file:../work/lib` dependency). The block writes W/lib/index.js and
// connects a server `node <outside>/srv/index.js`. A control naming W/lib/index.js is refused. Expected:
// refused; the marker never written.
import assert from 'node:assert/strict'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, landed, runEngine } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-node-modules-link-')

test('a Node server outside every root whose node_modules links a dependency into a root is refused', () => {
  const { W, home, outside, marker } = attackFolders(base)
  const srv = join(outside, 'srv')
  mkdirSync(join(W, 'lib'))
  mkdirSync(join(srv, 'node_modules'), { recursive: true })
  writeFileSync(join(W, 'lib', 'package.json'), '{"name":"lib","version":"1.0.0","main":"index.js"}\n')
  writeFileSync(join(W, 'lib', 'index.js'), 'module.exports = {}\n')
  writeFileSync(
    join(srv, 'package.json'),
    '{"name":"srv","version":"1.0.0","dependencies":{"lib":"file:../../work/lib"}}\n',
  )
  writeFileSync(join(srv, 'index.js'), "require('lib')\nsetTimeout(() => {}, 3000)\n")
  symlinkSync('../../../work/lib', join(srv, 'node_modules', 'lib'))
  const lib = `require('node:fs').appendFileSync(${JSON.stringify(marker)}, 'W/lib/index.js, written by the block, required on the host by a server outside every root through its node_modules/lib link\\n')\n`
  const server = (arg: string) => ({ command: process.execPath, args: [arg], env: {}, timeout_ms: 6_000 })
  const out = runEngine(
    base,
    W,
    home,
    outside,
    { control: server(join(W, 'lib', 'index.js')), srv: server(join(srv, 'index.js')) },
    [
      `W = ${JSON.stringify(W)}`,
      `open(W + '/lib/index.js', 'w').write(${JSON.stringify(lib)})`,
      "print('planted')",
      ...connectEach(['control', 'srv']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(
    out,
    /control refused mcp\.launch-denied/,
    `a server naming W/lib/index.js is refused (${out})`,
  )
  assert.equal(
    landed(marker),
    '',
    `the server node ${srv}/index.js started although its node_modules/lib links into the session root ${W}, and ` +
      `the host's node required the block's module: ${landed(marker)} (${out.slice(0, 500)})`,
  )
})
