import { resolve } from 'node:path'
import { sandboxWrittenParts } from '../util/home-parts.js'
import { within } from '../util/path-within.js'
import { realish } from '../util/real-path.js'
import { type WritablePlaces, writablePlaces } from '../util/writable-roots.js'
import { placesIn } from './env-spellings.js'
import { inRoot } from './server-home.js'
import { globMatcher } from './shell-parameter.js'

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

// Whether `place` (resolved against the cwd, no link followed) is the vis home's own: its lexical
// path AND its real path lie in the home, and neither in a part of it whose bytes a sandbox chooses
// (outboxes, drafts, blobs, logs: home-parts.ts). Every jail masks the rest of the home, so such a
// place is no sandbox's even when the home lies in a root (a workspace at $HOME), and a relative
// word resolved from the default cwd (`<home>/mcp-servers`) is not taken for a root's folder. Both spellings, because a sandbox makes
// links: W/src -> <outbox> has its real path in the home (thirteenth outsider pass), and a link in
// an outbox leads anywhere.
function ownedByHome(place: string, home: string): boolean {
  const homes = [resolve(home), realish(home)]
  const real = realish(place)
  if (!homes.some((h) => within(place, h)) || !within(real, realish(home))) return false
  const written = homes.flatMap(sandboxWrittenParts)
  return !written.some((w) => within(place, w) || within(real, w))
}

// The part of the vis home a sandbox writes that holds `place` by either spelling, if any.
function sandboxPartHolding(place: string, home: string): string | undefined {
  const real = realish(place)
  for (const h of [resolve(home), realish(home)])
    for (const w of sandboxWrittenParts(h)) if (within(place, w) || within(real, w)) return w
  return undefined
}

// The root or vis-home part a shell's pathname expansion of `place` may reach, if any: a value a
// shell runs (LESSOPEN's `|/tm?/W/lesspipe.sh %s`, GIT_SSH_COMMAND, EDITOR) globs each word, so
// `/tm?/W/x` is /tmp/W/x to it while its text lies in no root. A pattern whose leading components
// match a place's components names something in that place (fifteenth outsider pass); a pattern
// that only reaches an ancestor names no file inside it.
// The components are compared from `/`, so a pattern behind a link (every host has /proc/self/root,
// a link to `/`: `/proc/self/root/tm?/W/x`) is also compared with its pattern-free prefix resolved
// first, as the shell's globbing follows it (sixteenth outsider pass).
function globReaching(place: string, home: string, places: WritablePlaces): string | undefined {
  if (!/[*?[]/.test(place)) return undefined
  const components = place.split('/').filter((c) => c !== '')
  const first = components.findIndex((c) => /[*?[]/.test(c))
  const prefix = realish(`/${components.slice(0, first).join('/')}`)
  const behind = [...prefix.split('/').filter((c) => c !== ''), ...components.slice(first)]
  const targets = [...places.roots, ...[resolve(home), realish(home)].flatMap(sandboxWrittenParts)]
  for (const pattern of [components, behind])
    for (const target of targets) {
      const parts = resolve(target)
        .split('/')
        .filter((c) => c !== '')
      if (pattern.length < parts.length) continue
      const reaches = parts.every((part, i) => {
        const match = globMatcher(pattern[i] ?? '')
        return match === undefined || match(part)
      })
      if (reaches) return target
    }
  return undefined
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
  for (const [name, value] of Object.entries(env)) {
    if (name === 'PATH') continue
    const named = placesIn(value, cwd, vars)
    const secret = SECRET_NAME.test(name)
    if (named.commands.length > 0 && !secret)
      throw refuse(
        `MCP server ${server}: its env.${name} holds a command substitution ($(...) or backticks), which a ` +
          `shell runs to make the value, so where it leads cannot be judged before it runs; write the folder ` +
          `in ${name} as a path (a literal one, or $NAME of a variable the server gets)`,
      )
    const form = named.unbounded[0]
    if (form !== undefined && !secret)
      throw refuse(
        `MCP server ${server}: its env.${name} holds the shell form ${form}, whose result this check ` +
          `cannot compute, so where it leads cannot be judged before a shell expands it; write the folder in ${name} as a path (a literal one, $NAME or \${NAME} of a variable ` +
          `the server gets, or a form computed from one: \${NAME%/}, \${NAME#pat}, \${NAME/a/b}, \${NAME:0:3})`,
      )
    const unknown = named.unresolved[0]
    if (unknown !== undefined && !secret)
      throw refuse(
        `MCP server ${server}: its env.${name} names ${unknown}, another user's home, which this check cannot ` +
          `locate to tell whether a sandbox writes it; write that folder in ${name} as an absolute path`,
      )
    for (const place of named.paths) {
      const globbed = globReaching(place, home, places)
      if (globbed !== undefined)
        throw refuse(
          `MCP server ${server}: its env.${name} ${place} holds a shell pattern (*, ? or [...]) that a shell ` +
            `running the value may expand to a path in ${globbed}, which a sandbox writes; point ${name} in ` +
            'mcp.json at a folder outside every root, spelled without a pattern, or leave it out',
        )
      if (ownedByHome(place, home)) continue
      const part = sandboxPartHolding(place, home)
      const root = places.holding(place)
      if (part === undefined && root === undefined) continue
      const where =
        root !== undefined
          ? inRoot(place, root)
          : `${place} lies in ${part} (the vis home's outboxes, drafts, blobs or logs)`
      throw refuse(
        `MCP server ${server}: its env.${name} ${where}, which a sandbox writes, and a server or the ` +
          'tools it runs may load code or configuration, run a program or talk to a socket from a place ' +
          'any variable names, whatever its name; ' +
          `point ${name} in mcp.json at a folder outside every root, or leave it out (a folder for the ` +
          'server to serve reaches it through the MCP roots its client gives, not mcp.json)',
      )
    }
  }
}
