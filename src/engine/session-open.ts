import { normalizePolicy, type WorkerPolicy, type WorkerPolicyInput } from '../sessions/session-policy.js'
import { defaultTools } from '../tools/index.js'
import type { Tool } from '../tools/types.js'
import { checkRoots } from './roots.js'

// The one way the engine turns what a caller asks for into a session: its policy resolved
// (normalized, the roots pinned), its host tools, and a worker from the engine's session
// factory (src/sessions/session-factory.ts: the pool, the tool jail, the Session with its
// deadlines, interrupts and restore of definitions). The engine's sessions with history
// (session-lifecycle.ts, worker-start.ts) and its transient ones (create-runtime.ts, what
// createRuntime returns) both open here.

// Normalized (paths resolved, lists sorted: the warm pool's key) and, unless `pin` is false,
// each root pinned to the directory it names now (policy.root-changed later). Pins the caller
// already holds are kept as given; `verify` are pins the roots must still match.
export function resolvePolicy(
  input: WorkerPolicyInput,
  sessionId: string,
  opts: { pin?: boolean; verify?: Readonly<Record<string, string>> } = {},
): WorkerPolicy {
  const policy = normalizePolicy(input)
  if (opts.pin === false || policy.pins || policy.roots.length === 0) return policy
  policy.pins = checkRoots(policy, sessionId, opts.verify)
  return policy
}

// The host tools (files, git, shell per policy) for a session's roots, with the directories its
// jail masks hidden from them too.
export function hostToolsFor(sessionId: string, policy: WorkerPolicy, hidden: string[]): Promise<Tool[]> {
  return defaultTools({
    sessionId,
    roots: policy.roots,
    shell: policy.shell,
    hidden,
    pins: policy.pins,
    ...(policy.mode ? { mode: policy.mode } : {}),
    ...(policy.overlay ? { overlayRoot: policy.overlay.root } : {}),
  })
}
