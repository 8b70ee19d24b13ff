// Counters, gauges and histograms in the Prometheus text exposition format (version 0.0.4).
// Small on purpose: the engine needs a handful of series, not a client library.

type Labels = Record<string, string>

// Label values are nearly always plain words (an outcome, a tool name): one test instead of
// three replaceAll passes on every inc().
const SPECIAL = /[\\\n"]/
const esc = (v: string) =>
  SPECIAL.test(v) ? v.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('"', '\\"') : v

// Also the series' key, computed on every inc(): a block's finish bumps a one-label counter, so
// the common shapes skip the sort and the joins.
const labelText = (labels: Labels): string => {
  const keys = Object.keys(labels)
  if (keys.length === 0) return ''
  if (keys.length === 1) return `{${keys[0]}="${esc(labels[keys[0]!]!)}"}`
  return `{${keys
    .sort()
    .map((k) => `${k}="${esc(labels[k]!)}"`)
    .join(',')}}`
}

const num = (n: number): string => (Number.isFinite(n) ? String(n) : n > 0 ? '+Inf' : '-Inf')

interface Metric {
  readonly name: string
  readonly help: string
  render(): string[]
}

export class Counter implements Metric {
  private readonly values = new Map<string, { labels: Labels; value: number }>()
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = labelText(labels)
    const cur = this.values.get(key)
    if (cur) cur.value += by
    else this.values.set(key, { labels, value: by })
  }

  get(labels: Labels = {}): number {
    return this.values.get(labelText(labels))?.value ?? 0
  }

  render(): string[] {
    const rows = [...this.values.values()]
    if (rows.length === 0) return [`${this.name} 0`]
    return rows.map((r) => `${this.name}${labelText(r.labels)} ${num(r.value)}`)
  }
}

// A gauge read when scraped, so it can never drift from the state it reports.
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => number,
  ) {}

  render(): string[] {
    return [`${this.name} ${num(this.read())}`]
  }
}

export class Histogram implements Metric {
  private readonly counts: number[]
  private sum = 0
  private count = 0
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {
    this.counts = buckets.map(() => 0)
  }

  observe(value: number): void {
    this.sum += value
    this.count++
    this.buckets.forEach((le, i) => {
      if (value <= le) this.counts[i]!++
    })
  }

  get observations(): number {
    return this.count
  }

  render(): string[] {
    return [
      ...this.buckets.map((le, i) => `${this.name}_bucket{le="${num(le)}"} ${this.counts[i]}`),
      `${this.name}_bucket{le="+Inf"} ${this.count}`,
      `${this.name}_sum ${num(this.sum)}`,
      `${this.name}_count ${this.count}`,
    ]
  }
}

const TYPE = (m: Metric): string =>
  m instanceof Counter ? 'counter' : m instanceof Histogram ? 'histogram' : 'gauge'

export class Registry {
  private readonly metrics: Metric[] = []

  add<M extends Metric>(m: M): M {
    this.metrics.push(m)
    return m
  }

  render(): string {
    const lines: string[] = []
    for (const m of this.metrics) {
      lines.push(`# HELP ${m.name} ${m.help}`, `# TYPE ${m.name} ${TYPE(m)}`, ...m.render())
    }
    return `${lines.join('\n')}\n`
  }
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

// Seconds, from a fast tool call to a long computation.
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]

// The engine's series. Gauges take their readers so the registry never holds engine state.
export function engineMetrics(read: {
  sessionsOpen: () => number
  sessionsLive: () => number
  blocksRunning: () => number
  poolSize: () => number
  workerProcesses: () => number
}) {
  const registry = new Registry()
  return {
    registry,
    sessionsOpen: registry.add(
      new Gauge('vis_sessions', 'Sessions that are open (not closed).', read.sessionsOpen),
    ),
    sessionsLive: registry.add(
      new Gauge('vis_sessions_live', 'Open sessions with a live worker in this process.', read.sessionsLive),
    ),
    sessionsCreated: registry.add(new Counter('vis_sessions_created_total', 'Sessions created.')),
    sessionsClosed: registry.add(new Counter('vis_sessions_closed_total', 'Sessions closed.')),
    blocks: registry.add(
      new Counter('vis_blocks_total', 'Blocks finished, by outcome (ok, error, timeout).'),
    ),
    blocksRunning: registry.add(
      new Gauge('vis_blocks_running', 'Blocks accepted and not yet finished.', read.blocksRunning),
    ),
    blockLatency: registry.add(
      new Histogram('vis_block_duration_seconds', 'Wall time of finished blocks.', LATENCY_BUCKETS),
    ),
    workerRestarts: registry.add(
      new Counter(
        'vis_worker_restarts_total',
        'Fresh workers started for existing sessions (reopened after a host restart, defs restored).',
      ),
    ),
    workerRetirements: registry.add(
      new Counter(
        'vis_worker_retirements_total',
        'Workers retired (an interrupt could not land, or a crash).',
      ),
    ),
    poolSize: registry.add(
      new Gauge('vis_pool_size', 'Warm workers the pool keeps per policy.', read.poolSize),
    ),
    workerProcesses: registry.add(
      new Gauge(
        'vis_worker_processes',
        "Live worker processes: sessions' and the pool's.",
        read.workerProcesses,
      ),
    ),
  }
}
export type EngineMetrics = ReturnType<typeof engineMetrics>
