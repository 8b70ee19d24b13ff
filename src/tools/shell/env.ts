// The environment a model's shell gets: enough to find tools and a home,
// not the host's secrets. A login shell (`bash -l`) adds the user's profile.
const PASSED = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'SHELL']

export function shellEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const k of PASSED) if (process.env[k] !== undefined) env[k] = process.env[k]
  return { ...env, PAGER: 'cat', GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0', ...extra }
}
