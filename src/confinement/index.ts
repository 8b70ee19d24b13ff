export {
  type ConfinementPolicy,
  type ConfinementPolicyInput,
  ConfinementPolicySchema,
} from '../contracts/jail-policy.js'
export {
  type NetworkEntry,
  NetworkEntrySchema,
  type NetworkPolicy,
  type NetworkRule,
  NetworkRuleSchema,
} from '../contracts/network-policy.js'
export { type CgroupLayout, detectCgroups } from './cgroup.js'
export { compilePolicy, type EgressRequest, type EgressVerdict, evaluate } from './egress/evaluate.js'
export {
  type EgressForwarder,
  startEgressForwarder,
  startEgressForwarderFromEnv,
} from './egress/forwarder.js'
export { egressChecks } from './egress/health.js'
export { type EgressDecision, type EgressProxy, type EgressRules, startEgressProxy } from './egress/proxy.js'
export { EGRESS_PORT, EGRESS_SOCKET, sandboxEnvironment } from './environment.js'
export { launcherPath, loadConfineAddon, type SeccompOptions, type SeccompReport } from './native.js'
export { type Check, exitCodeFor, type ProbeReport, probe } from './probe.js'
export { installSeccomp, verifySeccomp } from './seccomp.js'
export {
  type ConfinedProcess,
  type LayerStatus,
  type SpawnConfinedOptions,
  seccompOptionsFor,
  spawnConfined,
} from './spawn.js'
