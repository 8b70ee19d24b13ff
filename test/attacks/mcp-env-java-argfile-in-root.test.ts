// Attack (fourteenth outsider pass; surface: mcp.json `env` judged by src/mcp-client/env-spellings.ts
// wordsIn). The java launcher expands `@argfiles` in JDK_JAVA_OPTIONS (and on its command line): `@<path>`
// is replaced by the options in that file. wordsIn keeps `@/W/java.args` as one word, which resolves to
// `<cwd>/@/W/java.args`, a name in the server's cwd, outside every root, so the value passes. The file is
// the block's, and it names what the JVM loads before any class: `-agentpath:<lib>.so` (dlopened),
// `-javaagent:<jar>`, `-cp`. A Java MCP server (`java -jar server.jar`, as Spring AI's are started)
// configured with `"JDK_JAVA_OPTIONS": "@<project>/.java.args"` (a project's JVM flags kept in a file)
// then runs the block's code on the host, unconfined. The same option written out
// (`-agentpath:W/lib/agent.so`) is refused.
//
// Reproduction: session on W; servers `control` (java -version, env JDK_JAVA_OPTIONS=-agentpath:W/lib/agent.so)
// and `argfile` (the same, env JDK_JAVA_OPTIONS=@W/java.args). The block writes W/lib/agent.so (built here by
// the test with the host's cc; its constructor appends to a marker outside W) and W/java.args
// (`-agentpath:W/lib/agent.so`) and connects both. Expected: both refused with mcp.launch-denied; the
// marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, connectEach, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-java-argfile-')

test('a java @argfile in a root named by JDK_JAVA_OPTIONS is refused like the options it holds', () => {
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  const build = join(base, 'build')
  for (const d of [W, home, outside, build]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(
    join(build, 'agent.c'),
    `#include <stdio.h>\n__attribute__((constructor)) static void ran(void) { FILE *f = fopen(${JSON.stringify(marker)}, "a"); if (f) { fputs("W/lib/agent.so, written by the block, loaded by the host's java through JDK_JAVA_OPTIONS=@W/java.args\\n", f); fclose(f); } }\nint Agent_OnLoad(void *vm, char *options, void *reserved) { return 0; }\n`,
  )
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-o', join(build, 'agent.so'), join(build, 'agent.c')], {
    encoding: 'utf8',
  })
  assert.equal(cc.status, 0, `building the agent: ${cc.stderr}`)
  const so = readFileSync(join(build, 'agent.so')).toString('base64')
  const server = (JDK_JAVA_OPTIONS: string): Server => ({
    command: 'java',
    args: ['-version'],
    env: { JDK_JAVA_OPTIONS },
    timeout_ms: 15_000,
  })
  const out = runEngine(
    base,
    W,
    home,
    outside,
    { control: server(`-agentpath:${W}/lib/agent.so`), argfile: server(`@${W}/java.args`) },
    [
      'import os, base64',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/lib', exist_ok=True)",
      `open(W + '/lib/agent.so', 'wb').write(base64.b64decode(${JSON.stringify(so)}))`,
      "open(W + '/java.args', 'w').write('-agentpath:' + W + '/lib/agent.so\\n')",
      "print('planted')",
      ...connectEach(['control', 'argfile']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `-agentpath:W/lib/agent.so is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `env JDK_JAVA_OPTIONS=@W/java.args passed the launch check (\`@W/...\` read as a name in the cwd) and ` +
      `the host's java loaded the agent the block's argfile named: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 500)})`,
  )
})
