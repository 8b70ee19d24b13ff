import { VisError } from '../../util/errors.js'
import { ownValue } from '../../util/own-key.js'

// The git tool runs git, not the programs git can be told to run. The model's arguments
// may not carry configuration or program names (`-c alias.x=!cmd`, `--exec-path`,
// `rebase --exec`, `clone --upload-pack`), and only git builtins run, so an alias a
// repository defines never resolves. What a repository's own config names (filters,
// textconv and merge drivers) is a known gap: see SECURITY.md.

// Builtins the tool runs. Left out: those whose job is to run a given command line
// (bisect run, submodule foreach, difftool, mergetool, filter-branch, archive --exec,
// send-email, instaweb, daemon) and plumbing the model has no use for.
const SUBCOMMANDS = new Set(
  [
    'add am annotate apply blame branch cat-file check-ignore checkout cherry cherry-pick clean',
    'clone commit config count-objects describe diff diff-files diff-index diff-tree fetch',
    'for-each-ref format-patch fsck gc grep hash-object init log ls-files ls-remote ls-tree merge',
    'merge-base mv name-rev notes pull push range-diff rebase reflog remote reset restore rev-list',
    'rev-parse revert rm shortlog show show-ref stash status switch symbolic-ref tag update-ref',
    'version whatchanged worktree',
  ]
    .join(' ')
    .split(' '),
)

// Options that name a program or a configuration, anywhere after the subcommand.
const LONG_REFUSED = [
  '--exec', // rebase --exec, archive --exec
  '--upload-pack', // fetch, pull, clone, ls-remote
  '--receive-pack', // push
  '--extcmd', // difftool
  '--open-files-in-pager', // grep
  '--config', // clone --config
  '--template', // init/clone: hooks from a directory
  '--ext-diff',
]
const SHORT_REFUSED: Record<string, string[]> = {
  rebase: ['-x'],
  clone: ['-c', '-u'],
  'ls-remote': ['-u'],
  grep: ['-O'],
}

// Configuration on every call that outranks a repository's own: no hooks, pager,
// fsmonitor, credential helper, askpass, editor or signing program; no `ext::` remotes.
export const PROTECTIVE_CONFIG = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.pager=cat',
  'core.editor=true',
  'sequence.editor=true',
  'core.askPass=',
  'credential.helper=',
  'core.sshCommand=ssh',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
  'protocol.ext.allow=never',
  // git:// runs core.gitProxy, a list the repository's own values come first in (first match
  // wins, so a -c cannot outrank them): the transport itself is refused instead.
  'protocol.git.allow=never',
  // Signing and verifying (`commit -S`, `log --show-signature`, log.showSignature) run these;
  // a path that names nothing makes them fail instead of running what a repository set.
  ...[
    'gpg.program',
    'gpg.openpgp.program',
    'gpg.x509.program',
    'gpg.ssh.program',
    'gpg.ssh.defaultKeyCommand',
  ].map((k) => `${k}=/nonexistent/vis-git-runs-no-program`),
]

// diff.external cannot be emptied from the command line (git then runs ""): the commands that
// print diffs get --no-ext-diff instead, right after the subcommand.
const NO_EXT_DIFF = new Set(['diff', 'log', 'show', 'whatchanged'])

export function gitArgv(args: string[], context: { sessionId?: string }): string[] {
  const refuse = (why: string): never => {
    throw new VisError('tool.bad-args', `git: ${why}`, { ...context, op: 'git' })
  }
  const sub = args[0]!
  if (sub.startsWith('-')) {
    refuse(
      `options before the subcommand (${sub}) are not accepted: git runs in the workspace root with a fixed configuration (no -c, -C, --git-dir, --exec-path, --config-env). Start with a subcommand, e.g. git("status")`,
    )
  }
  if (!SUBCOMMANDS.has(sub)) {
    refuse(
      `"${sub}" is not a git subcommand this tool runs (aliases and commands that run other programs are not). Use one of: ${[...SUBCOMMANDS].join(', ')}`,
    )
  }
  for (const a of args.slice(1)) {
    if (a === '--') break
    // git takes any unambiguous prefix of a long option (--upload-pac=CMD), so a prefix of a
    // refused one is refused too (from three characters, `--u`).
    const name = a.startsWith('--') ? a.split('=')[0]! : undefined
    const long =
      name === undefined || name.length < 3 ? undefined : LONG_REFUSED.find((o) => o.startsWith(name))
    // Short options cluster (-qu CMD is -q -u CMD): a refused letter anywhere in a cluster counts.
    const cluster = !a.startsWith('--') && a.startsWith('-') ? a.slice(1) : ''
    const short = ownValue(SHORT_REFUSED, sub)?.find((o) => cluster.includes(o.slice(1)))
    if (long || short) {
      refuse(
        `${sub} ${long ?? short} names a program or configuration for git to run; the git tool does not take it`,
      )
    }
  }
  const rest = NO_EXT_DIFF.has(sub) ? [sub, '--no-ext-diff', ...args.slice(1)] : args
  return ['--no-pager', ...PROTECTIVE_CONFIG.flatMap((c) => ['-c', c]), ...rest]
}

// Subcommands that only read the repository, for a session whose workspace is read-only
// (src/confinement/modes.ts): everything else is refused before git runs, with the mode's reason.
// The jail shows the root read-only anyway; this turns git's "Read-only file system" into a
// refusal the model can act on.
const READERS = new Set(
  [
    'annotate blame cat-file check-ignore cherry count-objects describe diff diff-files diff-index',
    'diff-tree for-each-ref format-patch fsck grep log ls-files ls-remote ls-tree merge-base name-rev',
    'range-diff rev-list rev-parse shortlog show show-ref status version whatchanged',
  ]
    .join(' ')
    .split(' '),
)
// Subcommands that list with these forms and change things otherwise.
const LISTING: Record<string, (rest: string[]) => boolean> = {
  branch: (r) =>
    r.every(
      (a) =>
        /^(-a|--all|-r|--remotes|-v|-vv|--verbose|--list|-l|--show-current|--no-color|--color(=.*)?|--contains|--merged|--no-merged|--sort=.*|--format=.*)$/.test(
          a,
        ) || !a.startsWith('-'),
    ) &&
    (r.includes('--list') || r.includes('-l') || r.every((a) => a.startsWith('-'))),
  tag: (r) => r.length === 0 || r[0] === '-l' || r[0] === '--list',
  stash: (r) => r[0] === 'list' || r[0] === 'show',
  remote: (r) =>
    r.length === 0 || r[0] === '-v' || r[0] === '--verbose' || r[0] === 'show' || r[0] === 'get-url',
  config: (r) => r.some((a) => /^(--get|--get-all|--get-regexp|--list|-l)$/.test(a)),
  worktree: (r) => r[0] === 'list',
  notes: (r) => r.length === 0 || r[0] === 'list' || r[0] === 'show',
  reflog: (r) => r.length === 0 || r[0] === 'show',
}

export function gitReadsOnly(args: string[]): boolean {
  const [sub = '', ...rest] = args
  if (READERS.has(sub)) return !(sub === 'format-patch' && !rest.includes('--stdout'))
  // Own keys only: a subcommand named "constructor" is not a listing form.
  return ownValue(LISTING, sub)?.(rest) ?? false
}
