import type { ConfinementPolicy } from '../contracts/jail-policy.js'
import { VisError } from '../util/errors.js'

// Inside the sandbox's own network namespace: the worker's forwarder listens here
// and relays to the host proxy's unix socket, bind-mounted at EGRESS_SOCKET.
export const EGRESS_PORT = 3128
export const EGRESS_DIR = '/run/vis'
export const EGRESS_SOCKET = `${EGRESS_DIR}/egress.sock`

// Host variables that are safe and useful to pass on; everything else is dropped
// because /proc/self/environ is readable by guest code.
const PASSED_THROUGH = ['LANG', 'LC_ALL', 'LC_CTYPE', 'TZ']

// Refused even from the caller: they change how the dynamic linker or node loads code.
const FORBIDDEN = /^(LD_|GCONV_PATH$|MALLOC_|NODE_PATH$|PYTHONHOME$|PYTHONPATH$|PYTHONSTARTUP$)/

export function sandboxEnvironment(
  policy: ConfinementPolicy,
  extra: Record<string, string> = {},
  host: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {
    PATH: policy.shell ? '/usr/local/bin:/usr/bin:/bin' : '/usr/bin',
    HOME: policy.roots[0] ?? '/tmp',
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
  }
  for (const key of PASSED_THROUGH) {
    const v = host[key]
    if (v !== undefined) env[key] = v
  }
  if (policy.network.enabled) {
    const url = `http://127.0.0.1:${EGRESS_PORT}`
    for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy'])
      env[k] = url
    env.VIS_EGRESS_SOCKET = EGRESS_SOCKET
    env.VIS_EGRESS_PORT = String(EGRESS_PORT)
  }
  for (const [k, v] of Object.entries(extra)) {
    if (FORBIDDEN.test(k)) {
      throw new VisError(
        'confine.env-forbidden',
        `environment variable ${k} may not be passed into a sandbox`,
        {
          key: k,
        },
      )
    }
    env[k] = v
  }
  return env
}
