import { execFileSync } from 'node:child_process'
import { chmodSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { hostProgramPath } from '../../util/host-programs.js'
import { makeHostStateDir } from '../../util/host-state-dirs.js'

// The global git config a tool jail reads. The host user's ~/.gitconfig is never shown to
// the sandbox: it routinely carries credentials (url.<token>.insteadOf, http.extraHeader,
// github.token). The jail gets a file of its own holding only the identity commits need.
const IDENTITY = ['user.name', 'user.email']

export type JailGitConfig = { file: string; dispose(): void }

export function jailGitConfig(): JailGitConfig {
  const lines = ['[user]']
  for (const key of IDENTITY) {
    const value = hostGlobal(key)
    // A value is written quoted; one that could not be (a quote, a backslash, a newline)
    // is left out rather than escaped.
    if (value && !/["\\\n\r]/.test(value)) lines.push(`\t${key.split('.')[1]} = "${value}"`)
  }
  const dir = makeHostStateDir('vis-gitconfig-')
  const file = join(dir, 'gitconfig')
  writeFileSync(file, `${lines.join('\n')}\n`)
  chmodSync(file, 0o444)
  return { file, dispose: () => rmSync(dir, { recursive: true, force: true }) }
}

function hostGlobal(key: string): string | undefined {
  const git = hostProgramPath('git')
  if (!git) return undefined
  try {
    return execFileSync(git, ['config', '--global', '--get', key], {
      encoding: 'utf8',
      timeout: 5000,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
  } catch {
    return undefined
  }
}
