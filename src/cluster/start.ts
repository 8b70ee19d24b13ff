import type { Engine } from '../engine/engine.js'
import { VisError } from '../util/errors.js'
import { issuesText } from '../util/zod-issues.js'
import { ClusterNode, type ClusterOptions, ClusterOptionsSchema } from './node.js'

// Cluster mode needs a store every node sees: PostgreSQL (VIS_DATABASE_URL). SQLite lives in one
// home on one machine and is refused here, before any lease is written.
export function startCluster(engine: Engine, options: ClusterOptions): ClusterNode {
  const parsed = ClusterOptionsSchema.safeParse(options)
  if (!parsed.success) {
    const problems = issuesText(parsed.error)
    throw new VisError('cluster.bad-option', `Invalid cluster options: ${problems}`, { issues: problems })
  }
  if ((engine.store.db as { dialect?: string }).dialect !== 'postgres') {
    throw new VisError(
      'cluster.needs-postgres',
      'Cluster mode (--node-id/--advertise) needs the shared PostgreSQL store: set VIS_DATABASE_URL=postgres://... on every node.',
      { nodeId: parsed.data.nodeId },
    )
  }
  const node = new ClusterNode(engine, parsed.data)
  node.start()
  return node
}

// The cluster flags of `vis serve`, from the command line or the environment.
export function clusterOptionsFrom(
  flags: { 'node-id'?: string; advertise?: string; 'lease-ms'?: string },
  env: NodeJS.ProcessEnv = process.env,
): ClusterOptions | undefined {
  const nodeId = flags['node-id'] ?? (env.VIS_NODE_ID || undefined)
  const advertise = flags.advertise ?? (env.VIS_NODE_URL || undefined)
  const leaseRaw = flags['lease-ms'] ?? (env.VIS_LEASE_MS || undefined)
  if (nodeId === undefined && advertise === undefined && leaseRaw === undefined) return undefined
  if (nodeId === undefined || advertise === undefined) {
    throw new VisError(
      'cli.bad-option',
      'Cluster mode needs both --node-id (VIS_NODE_ID) and --advertise URL (VIS_NODE_URL), the address other nodes reach this one at.',
    )
  }
  const leaseMs = leaseRaw === undefined ? undefined : Number(leaseRaw)
  const parsed = ClusterOptionsSchema.safeParse({ nodeId, advertise, leaseMs })
  if (!parsed.success) {
    const flag: Record<string, string> = {
      nodeId: '--node-id',
      advertise: '--advertise',
      leaseMs: '--lease-ms',
    }
    const problems = parsed.error.issues.map((i) => `${flag[String(i.path[0])] ?? i.path[0]}: ${i.message}`)
    throw new VisError('cli.bad-option', problems.join('; '), { issues: problems })
  }
  return parsed.data
}
