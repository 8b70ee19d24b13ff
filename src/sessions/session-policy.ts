// A session's policy (roots, network, shell, limits, masks, overlay, mounts) as the layers
// above the sessions name it: the engine and the MCP server take it from here, never from the
// worker that enforces it. It is defined beside the worker (src/worker/worker-policy.ts)
// because the jail and the warm pool's key are built from it below this layer.
export {
  normalizePolicy,
  tightenedNetwork,
  WorkerPolicy,
  type WorkerPolicyInput,
} from '../worker/worker-policy.js'
