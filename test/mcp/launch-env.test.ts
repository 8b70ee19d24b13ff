// mcp.json `env` for a stdio server (src/mcp-client/server-env.ts): a variable (since the sixteenth
// outsider pass any variable, whatever its name: PYTHONPATH, NODE_OPTIONS, npm's PREFIX, BASH_ENV, VIM,
// PGSSLKEY...) whose value names a path inside a session root is refused, mcp.launch-denied, naming the
// variable, the root and the fix, and nothing is started. The same paths outside every root, a data
// folder outside every root given in `args`, tokens, numbers and URLs still start;
// since the fifteenth outsider pass an argument naming a place in a root is refused like such a
// variable (launch.ts checkArgs: `node W/server.js` runs what the root's sandbox wrote). The attacks
// themselves are test/attacks/mcp-env-prefix-spelling-in-root.test.ts and
// test/attacks/mcp-env-code-path-in-root.test.ts.
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { after, before, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { StdioServerSchema } from '../../src/mcp-client/config.js'
import { ServerConnection } from '../../src/mcp-client/connection.js'
import { placesIn } from '../../src/mcp-client/env-spellings.js'
import { GLOB_PATHS } from '../../src/mcp-client/judge-word.js'
import { checkServerEnv } from '../../src/mcp-client/server-env.js'
import { VisError } from '../../src/util/errors.js'
import { python, stdioFixture, tempDir } from './helpers.js'

const home = realpathSync(tempDir('launch-env-home'))
const root = realpathSync(tempDir('launch-env-root'))
const outside = realpathSync(tempDir('launch-env-outside'))
const tsx = import.meta.resolve('tsx')
const serverDir = join(home, 'mcp-servers')
let engine: Engine

const stdio = (label: string, env: Record<string, string>, extra: string[] = []) => ({
  command: 'node',
  args: ['--import', tsx, stdioFixture, label, ...extra],
  env,
  connect_timeout_ms: 60_000,
})

// Each refused: the variable, its value naming a place in the root.
const refused: Record<string, Record<string, string>> = {
  pythonpath: { PYTHONPATH: `${outside}:${root}/src` },
  relative: { PYTHONPATH: relative(serverDir, join(root, 'src')) },
  requireopt: { NODE_OPTIONS: `--max-old-space-size=256 --require ${root}/hook.js` },
  importurl: { NODE_OPTIONS: `--import=file://${root}/hook.mjs` },
  prefix: { PREFIX: `${root}/npm-global` },
  destdir: { DESTDIR: root },
  nodepath: { NODE_PATH: `${root}/node_modules` },
  preload: { LD_PRELOAD: `${root}/x.so` },
  bashenv: { BASH_ENV: `${root}/.bashrc` },
  uvcache: { UV_CACHE_DIR: `${root}/.uv` },
  gemhome: { GEM_HOME: `${root}/gems` },
  perl: { PERL5LIB: `${root}/lib` },
  lowercase: { npm_config_globalconfig: `${root}/npmrc` },
}

const servers = {
  allowed: stdio(
    'allowed',
    {
      PYTHONPATH: `${outside}/src`,
      NODE_OPTIONS: '--max-old-space-size=256',
      PREFIX: outside,
      NOTES: outside,
      // Sixteenth outsider pass: every value is judged; these name no place in a root.
      GITHUB_TOKEN: 'ghp_0123456789abcdefABCDEF0123456789abcd',
      LOG_LEVEL: 'debug',
      DATABASE_URL: 'postgres://u:p@localhost/db',
      // The newly judged names (fifteenth pass) with their everyday values.
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
      PGHOST: '/var/run/postgresql',
      LESSOPEN: '| /usr/bin/lesspipe %s',
    },
    [outside],
  ),
  // A folder in the root given as an argument: an interpreter's argument may be its code.
  inargs: stdio('inargs', {}, [`--data=${root}/data`]),
  ...Object.fromEntries(Object.entries(refused).map(([name, env]) => [name, stdio(name, env)])),
}

before(async () => {
  engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false, mcpServers: servers })
})
after(async () => {
  await engine?.close()
})

async function connectError(name: string): Promise<{ code?: string; message: string } | undefined> {
  const config = StdioServerSchema.parse(servers[name as keyof typeof servers])
  const conn = new ServerConnection(name, config, 'launch-env-test', undefined, home)
  try {
    await conn.connect()
    return undefined
  } catch (err) {
    return { code: (err as { code?: string }).code, message: (err as Error).message }
  } finally {
    await conn.close()
  }
}

// Sixteenth outsider pass: no name rule. Every variable's value is judged by every reading, whatever
// its name (BASH_FUNC_node%% sourcing a file, PGSSLKEY naming an OpenSSL engine, VIM's runtime, and the
// names no list had), and the shell forms this check cannot bound are refused in any value but a
// secret's; values that are plainly no location still start.
test('every env variable is judged whatever its name; tokens, numbers, URLs and places outside every root pass', async () => {
  await engine.createSession({ roots: [root] })
  const check = (name: string, value: string) => {
    try {
      checkServerEnv(
        's',
        { [name]: value },
        serverDir,
        home,
        (why) => new VisError('mcp.launch-denied', why, {}),
        undefined,
        { HOME: dirname(root) },
      )
      return 'allowed'
    } catch (err) {
      assert.equal((err as VisError).code, 'mcp.launch-denied')
      return (err as Error).message
    }
  }
  for (const [name, value] of [
    // (Its usual `"$@"` is refused on its own, as an unbounded form.)
    ['BASH_FUNC_node%%', `() { . ${root}/tools/hook.sh; command node; }`],
    ['PGSSLKEY', `${root}/tools/engine.so:key`],
    ['VIM', `${root}/vim`],
    ['GIO_LAUNCH_DESKTOP', `${root}/bin/launch`],
    ['RUSTDOC', `${root}/bin/rustdoc`],
    ['DOTNET_STARTUP_HOOKS', `${root}/hook.dll`],
    ['LYNX_CFG', `${root}/lynx.cfg`],
    ['TEXMFCNF', `${root}/texmf:`],
    ['FLASK_APP', `${root}/app.py`],
    ['FCEDIT', `${root}/bin/ed`],
    ['TERMINAL', `${root}/bin/term`],
    ['COLLECT_GCC', `${root}/bin/gcc`],
    ['NOTES', root],
    ['lowercase_any', `--flag=${root}/x`],
  ] as const)
    assert.match(
      check(name, value),
      new RegExp(
        `its env\\.${name.replace(/[%]/g, '.')} ${root}/?[^ ]* lies in the session root ${root}.*whatever its name`,
      ),
      `${name}=${value}`,
    )
  // The unbounded forms are refused under any name (a closed command substitution, $1, ~user)...
  assert.match(check('SOME_SETTING', `$(cat ${outside}/where)/x`), /holds a command substitution/)
  assert.match(check('SOME_SETTING', '`pwd`/x'), /holds a command substitution/)
  assert.match(check('SOME_SETTING', '$1/x'), /holds the shell form \$1/)
  assert.match(check('SOME_SETTING', '~nobody-here/x'), /another user's home/)
  // ...but not in a secret's random text, nor an unclosed `$(`, which no shell runs.
  for (const [name, value] of [
    ['GITHUB_TOKEN', 'ghp_0123456789abcdefABCDEF0123456789abcd'],
    ['LOG_LEVEL', 'debug'],
    ['PORT', '8080'],
    ['TEMPERATURE', '0.7'],
    ['DATABASE_URL', 'postgres://u:p@localhost/db'],
    ['DBUS_SESSION_BUS_ADDRESS', 'unix:path=/run/user/0/bus'],
    ['NOTES', outside],
    ['NO_PROXY', 'localhost,127.0.0.*,*.internal'],
    ['PGPASSWORD', 'pa$(ss`word'],
    ['PGPASSWORD', 'x$1y`z`${'],
    ['API_KEY', 'k$(echo)~bob'],
    ['MYSQL_PWD', '$@$_'],
    ['SOME_SETTING', 'a$(b'],
  ] as const)
    assert.equal(check(name, value), 'allowed', `${name}=${value}`)
  // A secret's places are still judged.
  assert.match(check('API_TOKEN', `${root}/token`), /its env\.API_TOKEN .* lies in the session root/)
})

// A shell joins `\<newline>` before it reads anything (sixteenth outsider pass); a pattern behind a link
// to `/` (/proc/self/root) is compared with that link resolved.
test("a shell's line continuation is joined, and a pattern behind /proc/self/root is read from /", async () => {
  await engine.createSession({ roots: [root] })
  const cont = `${root.slice(0, -2)}\\\n${root.slice(-2)}`
  has(`|${cont}/tools/lesspipe.sh %s`, `${root}/tools/lesspipe.sh`)
  has(`"${cont}/x"`, `${root}/x`)
  const [, top, ...rest] = root.split('/')
  const globbed = `/proc/self/root/${top?.slice(0, -1)}?/${rest.join('/')}/tools/lesspipe.sh`
  assert.throws(
    () =>
      checkServerEnv(
        's',
        { LESSOPEN: `|${globbed} %s` },
        serverDir,
        home,
        (why) => new VisError('mcp.launch-denied', why, {}),
      ),
    new RegExp(`its env\\.LESSOPEN .* holds a shell pattern .* may expand to a path in ${root}`),
  )
  // The same pattern naming a place outside every root passes.
  const [, otop, ...orest] = outside.split('/')
  checkServerEnv(
    's',
    { LESSOPEN: `|/proc/self/root/${otop?.slice(0, -1)}?/${orest.join('/')}/lesspipe.sh %s` },
    serverDir,
    home,
    (why) => new VisError('mcp.launch-denied', why, {}),
  )
})

// The readings of a value (src/mcp-client/env-spellings.ts), each place resolved from the cwd.
// npm's spelling of a variable, written without a template literal's own braces.
const v = (name: string) => ['$', '{', name, '}'].join('')
const named = (value: string, vars: Record<string, string> = {}, hostHome = '/hosthome') =>
  placesIn(value, '/cwd', vars, hostHome)
const has = (value: string, place: string, vars?: Record<string, string>, hostHome?: string) =>
  assert.ok(
    named(value, vars, hostHome).paths.includes(place),
    `${value}: ${named(value, vars, hostHome).paths}`,
  )

test('a value yields each path it names, relative ones taken from the cwd', () => {
  for (const p of ['/a', '/b/c']) has('/a:/b/c', p)
  for (const p of ['/w/y.mjs', '/w/x.js']) has('--require /w/x.js --import=file:///w/y.mjs', p)
  // A URL other than file:// names no local place (a registry), whatever its path says.
  assert.ok(!named('http://127.0.0.1:4873/w/x').paths.some((p) => p.startsWith('/w')))
  has('https://registry.example/ file:///w/a%20b', '/w/a b')
  assert.deepEqual(named('../w/src').paths, [resolve('/cwd', '../w/src')])
  for (const p of ['/w/q', '/v']) has('"/w/q" , /v', p)
  // A search path keeps its spaces (PYTHONPATH splits at ':' only), and an option's attached
  // argument is a path too (perl's -I<dir>).
  has('/x/my work/src:/y', '/x/my work/src')
  has('-I/w/lib -MNotes', '/w/lib')
  // A file URL in each spelling Node takes, its path percent-decoded (a root named "my work").
  has('--import=file:/w/my%20work/h.mjs', '/w/my work/h.mjs')
  has('--import file://localhost/w/x.mjs', '/w/x.mjs')
  has('/w/my%20work', '/w/my work')
  // Quoted and escaped as a shell or NODE_OPTIONS takes them.
  has('--require "/w/my work/x.js"', '/w/my work/x.js')
  has("--require='/w/my work/x.js'", '/w/my work/x.js')
  has('-r /w/my\\ work/x.js', '/w/my work/x.js')
})

test("~, $NAME and npm's braced variables are read as the server's tools expand them, and as written", () => {
  const vars = { HOME: '/h', A: '/w', B: 'x:/w/list' }
  // ~ and ~/ are the server's HOME and the user's own; the word as written stays a reading.
  has('~/proj/npm-global', '/h/proj/npm-global', vars)
  has('~/proj/npm-global', '/hosthome/proj/npm-global', vars)
  has('~/proj/npm-global', '/cwd/~/proj/npm-global', vars)
  has('--require=~/x.js', '/h/x.js', vars)
  // npm's ${NAME} (and ${NAME?}) and a shell's $NAME, from the server's variables.
  has(`${v('HOME')}/proj/npm-global`, '/h/proj/npm-global', vars)
  has(`${v('HOME')}/proj/npm-global`, '/hosthome/proj/npm-global', vars)
  has('$A/src', '/w/src', vars)
  has(`${v('A?')}/src`, '/w/src', vars)
  has('/o:$B', '/w/list', vars)
  // A variable the server will not have (seventeenth outsider pass): a login shell's profile may set
  // it to any folder, so it is reported as a form this check cannot compute, not read as empty.
  for (const value of [`${v('NOPE')}/w/src`, '$NOPE/w', v('NOPE:-/w'), v('NOPE%/')])
    assert.ok(
      named(value, vars).unbounded.some((u) => /NOPE is no variable the server is given/.test(u)),
      `${value}: ${named(value, vars).unbounded}`,
    )
  // The shell sets PWD (and OLDPWD) to its working folder: the cwd, not a variable it is not given.
  has('$PWD/notes/env.sh', '/cwd/notes/env.sh', vars)
  has(`${v('OLDPWD')}/x`, '/cwd/x', vars)
  assert.deepEqual(named('$PWD/x', vars).unbounded, [])
  // ld.so's tokens name a program's folder, whichever program runs: reported, even when given.
  for (const value of ['$ORIGIN/../lib/x.so', `${v('ORIGIN')}/x`, '/x/$LIB/y', `/${v('PLATFORM')}`])
    assert.ok(
      named(value, { ...vars, ORIGIN: '/o', LIB: '/l', PLATFORM: 'p' }).unbounded.some((u) =>
        u.includes("dynamic linker's token"),
      ),
      value,
    )
  // A dotted name is read as module paths too (`python3 -m notes.server`).
  has('notes.server', '/cwd/notes', vars)
  has('notes.server:app', '/cwd/notes/server', vars)
  // Another user's home cannot be located: reported, for the caller to refuse.
  assert.deepEqual(named('~bob/lib').unresolved, ['~bob/lib'])
  assert.deepEqual(named('~/lib:/x').unresolved, [])
})

test("a shell's parameter forms, command substitutions, @argfiles and `..` after links are read as their programs read them", () => {
  // NOPE and NADA given empty: a variable the server is not given at all is refused (above).
  const vars = { HOME: '/h', A: '/a', NOPE: '', NADA: '' }
  // The word a shell substitutes for an unset (or, with +, a set) NAME, in every form and nested.
  for (const op of [':-', ':=', ':+', ':?', '-', '=', '+', '?'])
    has(v(`NOPE${op}/w/env.sh`), '/w/env.sh', vars)
  has(v(`A:-/w/env.sh`), '/a', vars)
  has(v(`A:-/w/env.sh`), '/w/env.sh', vars)
  has(v(`NOPE:-${v('NADA:-/w/deep')}`), '/w/deep', vars)
  has(`--require=${v('NOPE:-/w/x.js')}`, '/w/x.js', vars)
  // A command substitution is reported (the caller refuses it); a plain value has none.
  assert.deepEqual(named('$(echo /w)/x').commands, ['$(echo /w)/x'])
  assert.deepEqual(named('`echo /w`/x').commands, ['`echo /w`/x'])
  assert.deepEqual(named(`${v('A')}/x:$A`).commands, [])
  // java's @argfile, alone and attached to an option.
  has('@/w/java.args', '/w/java.args')
  has('-Xmx1g @/w/java.args', '/w/java.args')
  has('--data=@/w/body', '/w/body')
  // A `..` after a folder the value names: that folder is a reading, and the kernel's resolution
  // (the link W/tools -> a/b followed before the `..`) another.
  const base = realpathSync(tempDir('launch-env-dotdot'))
  const W = join(base, 'work')
  mkdirSync(join(W, 'a', 'b'), { recursive: true })
  symlinkSync('a/b', join(W, 'tools'))
  const p = named(`${W}/tools/../../shared/lib`).paths
  for (const place of [`${base}/shared/lib`, `${W}/tools`, `${W}/shared/lib`])
    assert.ok(p.includes(place), `${place}: ${p}`)
  // A `..` that climbs out of the cwd itself follows nothing the value names.
  assert.deepEqual(named('../w/src').paths, [resolve('/cwd', '../w/src')])
})

test("every bash parameter form is computed from NAME's value; the unbounded ones are reported", () => {
  const vars = { HOME: '/h', W: '/w/', A: '/a/b/c', N: 'A', U: '/W/X' }
  const exact = (value: string, place: string) => has(value, place, vars)
  // Fifteenth outsider pass: `${W%/}` is W without its trailing slash, not an unknown `W%/`.
  exact(v('W%/') + '/x.sh', '/w/x.sh')
  exact(v('A%/*') + '/y', '/a/b/y')
  exact(v('A%%/b*') + '/z', '/a/z')
  exact(v('A#/a') + '/x', '/b/c/x')
  exact(`/w/${v('A##*/')}`, '/w/c')
  exact(v('A%[/]c'), '/a/b')
  exact(v('A/b/q'), '/a/q/c')
  exact(v('A//\\//_'), '/cwd/_a_b_c')
  exact(v('A/#\\/a/\\/w'), '/w/b/c')
  exact(v('A/#//w'), '/w/a/b/c')
  // bash 5.2 puts the match where `&` stands in a replacement; earlier bash writes `&`.
  exact(v('A/b/&&'), '/a/bb/c')
  exact(v('A/b/&&'), '/a/&&/c')
  exact(v('U,,'), '/w/x')
  exact(v('A^^'), '/A/B/C')
  exact(v('A@U'), '/A/B/C')
  exact(v('A:0:4') + '/k', '/a/b/k')
  exact(v('A: -2'), '/c')
  exact(v('!N') + '/i', '/a/b/c/i')
  exact(v('A[0]') + '/j', '/a/b/c/j')
  // The form as written stays a reading too (a tool that does not expand it).
  exact(v('A%/') + '/x', `/cwd/${v('A%/')}/x`)
  // What this check cannot bound: the server's arguments, arithmetic on names, @P and @E, extglob.
  for (const [value, why] of [
    ['$1/x', "the server's arguments"],
    [`${v('0%/*')}/env.sh`, "the server's arguments"],
    ['$@', "the server's arguments"],
    [`${v('_')}`, "the server's arguments"],
    [v('A:N'), 'no literal numbers'],
    [v('A[i]'), 'arithmetic'],
    [v('A@P'), 'the @P transformation'],
    [v('A@E'), 'the @E transformation'],
    [v('A%+(c)'), 'cannot match as bash does'],
    [v('!A'), 'no plain variable name'],
  ] as const) {
    const u = named(value, vars).unbounded
    assert.ok(u.length === 1 && u[0]?.includes(why), `${value}: ${u}`)
  }
  for (const value of [v('W%/'), v('A/b/q'), '$A', '$$/x', v('#A')])
    assert.deepEqual(named(value, vars).unbounded, [])
})

test("a shell's control characters part a value: less's `|prog %s`, `||`, `|-`, and a URL's query", () => {
  for (const value of [
    '|/w/lesspipe.sh %s',
    '||/w/lesspipe.sh %s',
    '|-/w/lesspipe.sh %s',
    '| /w/lesspipe.sh %s',
  ])
    has(value, '/w/lesspipe.sh')
  has('cat /w/a|/w/b', '/w/b')
  has('true&&/w/b', '/w/b')
  has('(/w/sub)', '/w/sub')
  has('</w/in >/w/out', '/w/in')
  has('unixexec:path=/w/bin/bridge', '/w/bin/bridge')
  has('unix:path=/w/bus,guid=1', '/w/bus')
  has('postgresql:///db?host=/w/pg&port=5432', '/w/pg')
  has('mongodb://%2Fw%2Fmongo.sock', '/w/mongo.sock')
  // What bash makes of a value it runs: brace expansion, ANSI-C quoting (inside a default too), and a
  // variable `${X:=word}` set for the forms after it.
  has('/{w,z}/ssh -F x', '/w/ssh')
  has('/w{1..3}/s', '/w2/s')
  has("$'\\057w\\057x'", '/w/x')
  has(`${v("NOPE:-$'\\x2fw/y'")}`, '/w/y', { NOPE: '' })
  // `${X:=/w}` of a variable the server is not given is refused (seventeenth outsider pass).
  assert.ok(named(`${v('X:=/w')}/a:${v('X')}/b`).unbounded.length > 0)
  // Forms nested deeper than are read, and brace expansions too large to list, are reported.
  let deep = '/w/deep'
  const given: Record<string, string> = {}
  for (let i = 0; i < 70; i++) {
    deep = v(`N${i}:-${deep}`)
    given[`N${i}`] = ''
  }
  assert.ok(
    named(deep, given).unbounded.some((u) => u.includes('nested more than')),
    'deep nesting',
  )
  assert.ok(
    named('/x/{1..9999}').unbounded.some((u) => u.includes('brace expansion')),
    'brace bomb',
  )
  assert.ok(
    named(v('N:-a$/w')).unbounded.some((u) => u.includes('cannot read')),
    'unread form',
  )
})

test('env spellings into a root are refused; the same spellings outside every root pass', async () => {
  await engine.createSession({ roots: [root] })
  const H = dirname(root)
  const rel = basename(root)
  const vars = { HOME: H, WHERE: root, ELSEWHERE: outside, NOTES_ENV: '' }
  const check = (value: string, name = 'npm_config_prefix') => {
    try {
      checkServerEnv(
        's',
        { [name]: value },
        serverDir,
        home,
        (why) => new VisError('mcp.launch-denied', why, {}),
        undefined,
        vars,
      )
      return 'allowed'
    } catch (err) {
      assert.equal((err as VisError).code, 'mcp.launch-denied')
      return (err as Error).message
    }
  }
  for (const value of [
    `~/${rel}/npm-global`,
    `${v('HOME')}/${rel}/npm-global`,
    `$HOME/${rel}/npm-global`,
    `${v('WHERE')}/npm-global`,
    '$WHERE',
  ])
    assert.match(
      check(value),
      new RegExp(`its env\\.npm_config_prefix ${root}/?[^ ]* lies in the session root ${root}`),
      value,
    )
  assert.match(check(`-I${root}/lib -MNotes`, 'PERL5OPT'), /its env\.PERL5OPT .* lies in the session root/)
  assert.match(
    check('~nobody-here/lib'),
    /its env\.npm_config_prefix names ~nobody-here\/lib, another user's home, .*write that folder in npm_config_prefix as an absolute path/,
  )
  // Fourteenth outsider pass: a shell default, an @argfile, a `..` climbing out of a root, new names.
  for (const [value, name] of [
    [v(`NOTES_ENV:-${root}/config/env.sh`), 'BASH_ENV'],
    [`@${root}/java.args`, 'JDK_JAVA_OPTIONS'],
    [`${root}/tools/../../elsewhere/lib`, 'PERL5LIB'],
    [`${root}/config/openssl.cnf`, 'OPENSSL_CONF'],
    [`unix://${root}/docker.sock`, 'DOCKER_HOST'],
    [`${root}/bin/cc`, 'CC'],
    [`-B${root}/bin`, 'CFLAGS'],
    [`${root}/nltk`, 'NLTK_DATA'],
    // Fifteenth outsider pass: sockets and buses a sandbox would serve, bash's other forms, less's pipe.
    [`unixexec:path=${root}/bin/bridge`, 'DBUS_SESSION_BUS_ADDRESS'],
    [`unix:path=${root}/bus`, 'DBUS_SYSTEM_BUS_ADDRESS'],
    [`unix:path=${root}/bus`, 'DBUS_STARTER_ADDRESS'],
    [`${root}/pg`, 'PGHOST'],
    [`${root}/mysql.sock`, 'MYSQL_UNIX_PORT'],
    [`unix://${root}/podman.sock`, 'CONTAINER_HOST'],
    [`postgresql:///app?host=${root}/pg`, 'DATABASE_URL'],
    [`${root}/tmp`, 'TMPDIR'],
    [`${v('WHERE%/')}/.mcp/env.sh`, 'BASH_ENV'],
    [`${v('WHERE/#/')}/.mcp/env.sh`, 'BASH_ENV'],
    [`${v('WHERE:0:999')}/env.sh`, 'BASH_ENV'],
    [`|${root}/tools/lesspipe.sh %s`, 'LESSOPEN'],
    [`||${root}/tools/lesspipe.sh %s`, 'LESSOPEN'],
    [`|-${root}/tools/lesspipe.sh %s`, 'LESSOPEN'],
    [`/{${root},${outside}}/bin/ssh`, 'GIT_SSH_COMMAND'],
  ] as const)
    assert.match(
      check(value, name),
      new RegExp(`its env\\.${name} ${root}/?[^ ]* lies in the session root ${root}`),
      value,
    )
  // Seventeenth outsider pass: a variable the server is not given (a login shell's profile may set it) is
  // refused, whatever it would name, and ld.so's $ORIGIN.
  for (const value of [`$UNSET${root}/x`, v('UNSET?'), v(`UNSET:-${outside}/env.sh`), `$UNSET/x`])
    assert.match(
      check(value, 'BASH_ENV'),
      /holds the shell form .*UNSET is no variable the server is given.*give UNSET in mcp\.json's env/,
      value,
    )
  assert.match(
    check('$ORIGIN/../lib/x.so', 'LD_PRELOAD'),
    /holds the shell form \$ORIGIN \(the dynamic linker's token/,
  )
  // The folder holding the root here is HOME's, which commonly holds a project: not refused for that.
  assert.equal(check(dirname(root), 'VIM'), 'allowed')
  assert.match(
    check(`$(echo ${outside})/env.sh`, 'BASH_ENV'),
    /its env\.BASH_ENV holds a command substitution .* cannot be judged/,
  )
  assert.match(check('`pwd`/env.sh', 'BASH_ENV'), /command substitution/)
  // A form whose result this check cannot bound is refused, naming the form (fifteenth pass).
  assert.match(
    check(`${v('0%/*')}/env.sh`, 'BASH_ENV'),
    /its env\.BASH_ENV holds the shell form \$\{0%\/\*\} \(the server's arguments, which this check does not see\).* cannot be judged before a shell expands it/,
  )
  assert.match(
    check(`${v('WHERE@P')}/env.sh`, 'BASH_ENV'),
    /holds the shell form \$\{WHERE@P\} \(the @P transformation\)/,
  )
  // A pathname pattern a shell running the value expands into the root (`/tm?/<root>/x`).
  const [, top, ...rest] = root.split('/')
  const globbed = `/${top?.slice(0, -1)}?/${rest.join('/')}/tools/lesspipe.sh`
  assert.match(
    check(`|${globbed} %s`, 'LESSOPEN'),
    new RegExp(`its env\\.LESSOPEN .* holds a shell pattern .* may expand to a path in ${root}`),
  )
  for (const value of [
    `${v('ELSEWHERE')}/npm-global`,
    `~/${basename(outside)}/npm-global`,
    '$ELSEWHERE',
    `${outside}/my dir`,
    '-Ilib',
    // The same forms naming places outside every root still pass.
    v(`ELSEWHERE:-${outside}/env.sh`),
    `@${outside}/java.args`,
    `${outside}/a/../b`,
    `../${basename(outside)}/lib`,
  ])
    assert.equal(check(value), 'allowed', value)
  // Fifteenth outsider pass: the ordinary settings of the newly judged names still pass.
  for (const [value, name] of [
    ['unix:path=/run/user/1000/bus', 'DBUS_SESSION_BUS_ADDRESS'],
    ['unix:path=/run/dbus/system_bus_socket', 'DBUS_SYSTEM_BUS_ADDRESS'],
    ['/var/run/postgresql', 'PGHOST'],
    ['db.example.com', 'PGHOST'],
    ['/run/mysqld/mysqld.sock', 'MYSQL_UNIX_PORT'],
    ['unix:///run/user/1000/podman/podman.sock', 'CONTAINER_HOST'],
    ['postgresql://app:s3cret@db.example.com:5432/app?sslmode=require', 'DATABASE_URL'],
    [`${v('ELSEWHERE%/')}/.mcp/env.sh`, 'BASH_ENV'],
    [`|${outside}/lesspipe.sh %s`, 'LESSOPEN'],
    ['0.7', 'TEMPERATURE'],
    ['pa$(ss`word', 'PGPASSWORD'],
    [`|${outside.slice(0, -1)}?/lesspipe.sh %s`, 'LESSOPEN'],
    ['localhost,127.0.0.*,*.internal', 'NO_PROXY'],
    ['postgresql:///app?host=/var/run/postgresql', 'DATABASE_URL'],
  ] as const)
    assert.equal(check(value, name), 'allowed', `${name}=${value}`)
})

test('an env location naming a path in a root is refused: mcp.launch-denied, nothing started', async () => {
  await engine.createSession({ roots: [root] })
  for (const [name, env] of Object.entries(refused)) {
    const variable = Object.keys(env)[0]!
    const err = await connectError(name)
    assert.equal(err?.code, 'mcp.launch-denied', `${name}: ${JSON.stringify(err)}`)
    assert.ok(err.message.includes(`its env.${variable} ${root}`), err.message)
    assert.ok(err.message.includes(`lies in the session root ${root}`), err.message)
    assert.ok(
      err.message.includes(`point ${variable} in mcp.json at a folder outside every root, or leave it out`),
      err.message,
    )
  }
})

test('an argument naming a place in a root is refused, naming the argument and the root', async () => {
  await engine.createSession({ roots: [root] })
  const err = await connectError('inargs')
  assert.equal(err?.code, 'mcp.launch-denied', JSON.stringify(err))
  assert.match(err?.message ?? '', /args\[\d+\] "--data=/, err?.message)
  assert.ok(err?.message.includes(`lies in the session root ${root}`), err?.message)
})

test('the same settings outside every root, a folder outside in args, tokens and URLs still start', async () => {
  const id = (await engine.createSession({ roots: [root] })).id
  const b = (await engine.runBlock(id, { code: 'mcp_allowed_pid()', timeout_ms: 120_000 })).block
  assert.equal(b.error, null, JSON.stringify(b.error))
  const pid = Number(b.result)
  const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
  assert.ok(env.includes(`PYTHONPATH=${outside}/src`), env.join(' '))
  assert.ok(env.includes(`NOTES=${outside}`), env.join(' '))
  assert.ok(env.includes('GITHUB_TOKEN=ghp_0123456789abcdefABCDEF0123456789abcd'), env.join(' '))
  assert.ok(env.includes('DATABASE_URL=postgres://u:p@localhost/db'), env.join(' '))
  assert.ok(env.includes('DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus'), env.join(' '))
  assert.ok(env.includes('PGHOST=/var/run/postgresql'), env.join(' '))
  assert.ok(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(outside))
})

// The vis home's exemption (thirteenth outsider pass): a place is the home's only when the path as
// written and its real path both lie in it, outside the outboxes and drafts sandboxes write. A vis
// home inside the root stands for a workspace at $HOME; the attack itself, a root's W/src linked into
// the block's outbox, is test/attacks/mcp-env-link-into-vis-home.test.ts.
test('a place in the vis home is exempt by both spellings and outside its outboxes and drafts; links are judged where they lie', async () => {
  await engine.createSession({ roots: [root] })
  const visHome = join(root, '.vis')
  const cwd = join(visHome, 'mcp-servers')
  for (const d of [
    cwd,
    join(visHome, 'outbox', 'worker-1'),
    join(visHome, 'drafts', 'drf_1', 'upper'),
    join(root, 'src'),
  ])
    mkdirSync(d, { recursive: true })
  symlinkSync(join(visHome, 'outbox', 'worker-1'), join(root, 'to-outbox'))
  symlinkSync(cwd, join(root, 'to-server-dir'))
  symlinkSync(join(root, 'src'), join(cwd, 'to-src'))
  const check = (value: string) => {
    try {
      checkServerEnv(
        's',
        { PYTHONPATH: value },
        cwd,
        visHome,
        (why) => new VisError('mcp.launch-denied', why, {}),
      )
      return 'allowed'
    } catch (err) {
      assert.equal((err as VisError).code, 'mcp.launch-denied')
      return (err as Error).message
    }
  }
  // Allowed: the home's own folders, spelled absolutely or relative to the default cwd.
  assert.equal(check(`${cwd}/lib`), 'allowed')
  assert.equal(check('lib:../cache'), 'allowed')
  // Refused: a root's link into the home (the sandbox re-points it), a home link into the root, and
  // the outboxes and drafts themselves.
  assert.match(check(join(root, 'to-outbox')), /env\.PYTHONPATH .*to-outbox lies in the session root/)
  assert.match(check(join(root, 'to-server-dir')), /lies in the session root/)
  assert.match(check('to-src'), /lies in the session root/)
  // The outboxes and drafts of a vis home outside every root are refused for themselves.
  const check2 = (value: string) => {
    try {
      checkServerEnv(
        's',
        { PYTHONPATH: value },
        serverDir,
        home,
        (why) => new VisError('mcp.launch-denied', why, {}),
      )
      return 'allowed'
    } catch (err) {
      return (err as Error).message
    }
  }
  assert.equal(check2(`${serverDir}/lib`), 'allowed')
  assert.match(
    check2(join(home, 'outbox', 'worker-t')),
    /env\.PYTHONPATH .*outbox\/worker-t lies in .*outbox \(the vis home's outboxes, drafts, blobs or logs\), which a sandbox writes/,
  )
  assert.match(
    check2(join(home, 'drafts', 'drf_t', 'upper')),
    /drafts \(the vis home's outboxes, drafts, blobs or logs\)/,
  )
  // The blob store holds an attachment's bytes exactly as a block made them, and a worker's log its
  // stderr: `--require` loads a file of any name as JavaScript.
  assert.match(
    check2(join(home, 'blobs', 'sha256', 'ab', 'cdef')),
    /blobs \(the vis home's outboxes, drafts, blobs or logs\)/,
  )
  const withOptions = (value: string) => {
    try {
      checkServerEnv(
        's',
        { NODE_OPTIONS: value },
        serverDir,
        home,
        (why) => new VisError('mcp.launch-denied', why, {}),
      )
      return 'allowed'
    } catch (err) {
      return (err as Error).message
    }
  }
  assert.match(
    withOptions(`--require=${join(home, 'blobs', 'sha256', 'ab', 'cdef')}`),
    /env\.NODE_OPTIONS .*blobs/,
  )
  assert.match(withOptions(`--require ${join(home, 'logs', 'worker-7.log')}`), /env\.NODE_OPTIONS .*logs/)
  assert.equal(withOptions(`--require=${serverDir}/hook.js`), 'allowed')
})

// A pattern is also expanded over the host's folders as a shell would: a match that is a link outside
// every root leading into one reaches the root, though no component of the pattern names it; a pattern
// matching more existing paths than the check reads is refused as a form it cannot compute.
test('a pattern whose match is a link into a root is refused, and one matching too many paths too', async () => {
  await engine.createSession({ roots: [root] })
  const links = join(outside, 'globbed-links')
  mkdirSync(join(links, 'elsewhere'), { recursive: true })
  symlinkSync(root, join(links, 'link-in'))
  symlinkSync(join(links, 'elsewhere'), join(links, 'link-out'))
  const check = (value: string) =>
    checkServerEnv(
      's',
      { LESSOPEN: value },
      serverDir,
      home,
      (why) => new VisError('mcp.launch-denied', why, {}),
    )
  assert.throws(
    () => check(`|${links}/link-i?/tools/lesspipe.sh %s`),
    new RegExp(`its env\\.LESSOPEN .* holds a shell pattern .* may expand to a path in ${root}`),
  )
  assert.throws(() => check(`|${links}/*/tools/lesspipe.sh %s`), /holds a shell pattern/)
  // The same pattern matching only the link that leads elsewhere passes.
  check(`|${links}/link-o?t/tools/lesspipe.sh %s`)
  const wide = join(outside, 'globbed-wide')
  mkdirSync(wide)
  for (let i = 0; i <= GLOB_PATHS; i++) mkdirSync(join(wide, `d${i}`))
  assert.throws(
    () => check(`|${wide}/d*/lesspipe.sh %s`),
    new RegExp(
      `holds the shell form ${wide}/d\\*/lesspipe\\.sh \\(a pattern matching more than ${GLOB_PATHS} existing paths\\)`,
    ),
  )
})
