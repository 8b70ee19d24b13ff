// Attack (seventeenth outsider pass; surface: the env judgement of src/mcp-client/judge-word.ts and
// env-spellings.ts). The dynamic linker expands its own tokens in LD_PRELOAD and LD_LIBRARY_PATH
// (`man ld.so`, "Dynamic string tokens"): `$ORIGIN` is the folder of the program being run (its real
// path, from /proc/self/exe), `$LIB` and `$PLATFORM` the system's library folder and platform. The
// judgement reads `$ORIGIN` as a shell variable the server will not have: kept as written (a relative
// word under the server's cwd, in the vis home) and empty (`/../work/...`, which climbs out of `/` and
// names /work). Neither is the place ld.so loads: with the server installed at <base>/bin (outside every
// root, beside the person's project <base>/work, a session root), `LD_PRELOAD=$ORIGIN/../work/lib/x.so`
// is <base>/work/lib/x.so to ld.so, and the host maps the block's shared object into the server, running
// its constructor on the host before main. The classic spelling `LD_LIBRARY_PATH=$ORIGIN/../lib` is the
// same gap for any root that lies beside a server's folder (an nvm/pyenv/uv install in ~ and a root in ~).
//
// Reproduction: session on W=<base>/work; the server's program is <base>/bin/env (a copy of /usr/bin/env,
// so its $ORIGIN is <base>/bin) running node. Servers `control` (env LD_PRELOAD=W/lib/planted.so) and
// `origin` (env LD_PRELOAD=$ORIGIN/../work/lib/planted.so). The block writes W/lib/planted.so (a shared
// object whose constructor appends to a marker outside W) and connects both.
// Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
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
import { after, test } from 'node:test'
import { connectEach, runEngine, type Server } from './outsider14-run.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-ld-origin-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('LD_PRELOAD=$ORIGIN/../<root>/x.so (ld.so expands $ORIGIN to the program folder) is refused', () => {
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  const bin = join(base, 'bin')
  const build = join(base, 'build')
  for (const d of [W, home, outside, bin, build]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  // The server's program, installed outside every root: ld.so's $ORIGIN is the folder of its real path.
  copyFileSync('/usr/bin/env', join(bin, 'env'), 0)
  spawnSync('chmod', ['755', join(bin, 'env')])
  // The block's shared object, built here and written by the block (the bytes are the sandbox's).
  const source = join(build, 'planted.c')
  writeFileSync(
    source,
    [
      '#include <fcntl.h>',
      '#include <string.h>',
      '#include <unistd.h>',
      '__attribute__((constructor)) static void planted(void) {',
      `  int fd = open(${JSON.stringify(marker)}, O_WRONLY | O_CREAT | O_APPEND, 0644);`,
      '  const char *m = "W/lib/planted.so, written by the block, mapped into the MCP server on the host\\n";',
      '  if (fd >= 0) { write(fd, m, strlen(m)); close(fd); }',
      '}',
      '',
    ].join('\n'),
  )
  const so = join(build, 'planted.so')
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-o', so, source], { encoding: 'utf8' })
  assert.equal(cc.status, 0, `this test needs a C compiler: ${cc.stderr}`)
  const bytes = readFileSync(so).toString('base64')
  const server = (env: Record<string, string>): Server => ({
    command: join(bin, 'env'),
    args: [process.execPath, '-e', 'setTimeout(() => {}, 3000)'],
    env,
    timeout_ms: 6_000,
  })
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server({ LD_PRELOAD: `${W}/lib/planted.so` }),
      origin: server({ LD_PRELOAD: '$ORIGIN/../work/lib/planted.so' }),
    },
    [
      'import base64, os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/lib', exist_ok=True)",
      `open(W + '/lib/planted.so', 'wb').write(base64.b64decode(${JSON.stringify(bytes)}))`,
      "print('planted')",
      ...connectEach(['control', 'origin']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `LD_PRELOAD=W/lib/planted.so is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    'env LD_PRELOAD=$ORIGIN/../work/lib/planted.so passed the launch check (read as a shell variable, kept or ' +
      "empty, never as ld.so's program folder) and the host's dynamic linker mapped the block's object into the " +
      `server: ${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 500)})`,
  )
  assert.match(out, /origin refused mcp\.launch-denied/, out)
})
