import { homedir } from 'node:os'
import { dirname, resolve } from 'node:path'
import { realish } from '../util/real-path.js'
import { type WritablePlaces, writablePlaces } from '../util/writable-roots.js'
import { judgeWord, refusal } from './judge-word.js'

// mcp.json `env` variables that would make a stdio server (run on the host, unconfined) load code or
// configuration from a folder a sandbox writes. No list of names can be complete: the twelfth to
// fifteenth outsider passes grew a rule of name words (PATH, LIB, ENV, HOST, URL...) and the sixteenth
// still found code behind names with none of them: `BASH_FUNC_node%%` (bash imports its value as a
// function), `PGSSLKEY=W/engine.so:key` (libpq has OpenSSL load the engine), `VIM=W/vim` (vim's
// runtime), and GIO_LAUNCH_DESKTOP, RUSTDOC, DOTNET_*, LYNX_CFG, TEXMFCNF, FLASK_APP, FCEDIT, TERMINAL,
// COLLECT_GCC... So the rule has no names: every variable's value is judged by every reading
// (env-spellings.ts), whatever its name, and one naming a place a sandbox writes is refused. Nothing
// in mcp.json may name a place in a root (checkArgs judges `args` the same way): a data folder reaches
// a server through the MCP roots a client gives. A value that is plainly no location (a token, a
// number, a URL of a remote host) names only places under the server's cwd, outside every root.
// PATH is not judged here: its in-root entries are passed over (launch.ts cleanPath).

// The names of secrets, whose values are random text: a generated password holds `$1`, `${`, a pair
// of backticks or `~x` often enough that refusing the shell forms this check cannot bound would refuse
// ordinary configurations, and no tool runs a password through a shell. Their values' places are
// judged like any other's; only those refusals are spared.
const SECRET_NAME = /(PASSWORD|PASSWD|PASSPHRASE|_PWD|TOKEN|SECRET|API_?KEY)$/i

const HOME_FOLDERS = new Set(['HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME'])

// The folders an env value may name though a root lies below them, as nearly every configuration's
// do: `/`, the home (the server's and the user's) and the folders above it (a root is most often a
// project in ~), and the server's cwd (judged in launch.ts; a value `.` or a word read as relative
// names it). A variable naming one of these (GOPATH=$HOME) still reaches a root below it; such a root
// is a folder the person chose to open a session on, rarely at the fixed places a program reads.
function commonHolders(cwd: string, vars: Record<string, string | undefined>): (place: string) => boolean {
  const homes = [homedir(), vars.HOME].filter((h): h is string => h !== undefined && h !== '')
  const spelled = new Set<string>(['/', resolve(cwd), realish(cwd)])
  for (const h of homes)
    for (let d of [resolve(h), realish(h)])
      for (;;) {
        spelled.add(d)
        const up = dirname(d)
        if (up === d) break
        d = up
      }
  return (place) => spelled.has(resolve(place)) || spelled.has(realish(place))
}

// Throws `refuse(why)` for the first mcp.json env variable (PATH aside) that names a place a sandbox
// writes, by any reading of its value (env-spellings.ts; `vars` is the env the
// server gets, for its variables and ~): inside a writable root (judged by the path as written, its real path
// and its parent's, so a link in a root is the root's wherever it leads), or in a vis home's outbox
// or draft. Runs at every start: roots open after start-up.
export function checkServerEnv(
  server: string,
  env: Record<string, string>,
  cwd: string,
  home: string,
  refuse: (why: string) => Error,
  places: WritablePlaces = writablePlaces(),
  vars: Record<string, string | undefined> = { ...process.env, ...env },
): void {
  const exempt = commonHolders(cwd, vars)
  for (const [name, value] of Object.entries(env)) {
    if (name === 'PATH') continue
    // The shared judgement of a word (judge-word.ts), which args go through too. A folder holding a
    // root is refused in a value (VIM=P with a root P/vimfiles: vim sources P/vimfiles/plugin;
    // seventeenth outsider pass), but not in HOME and the XDG folders, judged as such after this
    // (server-home.ts explicitHomeUnfit: a HOME may hold a project, an XDG folder may not).
    const verdict = judgeWord(value, [cwd], home, places, vars, {
      spareShellForms: SECRET_NAME.test(name),
      ...(HOME_FOLDERS.has(name) ? {} : { holdsRoot: { exempt } }),
    })
    if (verdict !== undefined)
      throw refuse(
        refusal(
          server,
          `env.${name}`,
          '',
          name,
          verdict,
          'a server or the tools it runs may load code or configuration, run a program or talk to a socket ' +
            'from a place any variable names, whatever its name',
          `point ${name} in mcp.json at a folder outside every root, or leave it out (a folder for the ` +
            'server to serve reaches it through the MCP roots its client gives, not mcp.json)',
        ),
      )
  }
}
