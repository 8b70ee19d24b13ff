import { VisError } from '../../util/errors.js'

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
]

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
    const long = LONG_REFUSED.find((o) => a === o || a.startsWith(`${o}=`))
    const short = SHORT_REFUSED[sub]?.find((o) => a === o || (a.startsWith(o) && !a.startsWith('--')))
    if (long || short) {
      refuse(
        `${sub} ${long ?? short} names a program or configuration for git to run; the git tool does not take it`,
      )
    }
  }
  return ['--no-pager', ...PROTECTIVE_CONFIG.flatMap((c) => ['-c', c]), ...args]
}
