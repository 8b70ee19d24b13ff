// The host environment a tool's process gets when it runs unjailed: enough
// to find programs and a home, not the host's secrets. A jailed process gets
// the jail's own environment instead (src/confinement/environment.ts).
const PASSED = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'SHELL']

export function hostBaseEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const k of PASSED) {
    const v = process.env[k]
    if (v !== undefined) env[k] = v
  }
  return env
}

// What every shell gets on top of its base: nothing waits for a person.
export function shellVars(extra: Record<string, string> = {}): Record<string, string> {
  return { PAGER: 'cat', GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0', ...extra }
}
