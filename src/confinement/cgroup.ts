import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pidExists } from '../util/proc.js'

// Where a controller lets us make child groups, and which files set the limit.
export type Controller = {
  name: 'memory' | 'pids'
  version: 'v1' | 'v2'
  parent: string // our own group in that hierarchy
  limitFile: string
}

export type CgroupLayout = {
  versions: ('v1' | 'v2')[]
  memory?: Controller
  pids?: Controller
}

type Mount = { point: string; type: string; options: string[] }

function mounts(): Mount[] {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [, point = '', type = '', options = ''] = line.split(' ')
      return { point: point.replace(/\\040/g, ' '), type, options: options.split(',') }
    })
}

function ownGroups(): Map<string, string> {
  // "4:memory:/a/b" (v1) or "0::/a/b" (v2, key "")
  const map = new Map<string, string>()
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line)
    if (!m) continue
    for (const c of (m[1] ?? '').split(',')) map.set(c, m[2] ?? '/')
  }
  return map
}

export function detectCgroups(): CgroupLayout {
  const layout: CgroupLayout = { versions: [] }
  const groups = ownGroups()
  const all = mounts()
  for (const name of ['memory', 'pids'] as const) {
    const v1 = all.find((m) => m.type === 'cgroup' && m.options.includes(name))
    const v1Path = groups.get(name)
    if (v1 && v1Path !== undefined) {
      layout[name] = {
        name,
        version: 'v1',
        parent: join(v1.point, v1Path),
        limitFile: name === 'memory' ? 'memory.limit_in_bytes' : 'pids.max',
      }
      continue
    }
    const v2 = all.find((m) => m.type === 'cgroup2')
    const v2Path = groups.get('')
    if (v2 && v2Path !== undefined) {
      const parent = join(v2.point, v2Path)
      const enabled = readOr(join(parent, 'cgroup.subtree_control'), '').split(/\s+/)
      if (enabled.includes(name)) {
        layout[name] = {
          name,
          version: 'v2',
          parent,
          limitFile: name === 'memory' ? 'memory.max' : 'pids.max',
        }
      }
    }
  }
  if (all.some((m) => m.type === 'cgroup')) layout.versions.push('v1')
  if (all.some((m) => m.type === 'cgroup2')) layout.versions.push('v2')
  return layout
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return fallback
  }
}

// Can we make (and remove) a child group under this controller?
export function canCreateChild(c: Controller): boolean {
  const dir = join(c.parent, `vis-probe-${process.pid}-${Date.now()}`)
  try {
    mkdirSync(dir)
    rmdirSync(dir)
    return true
  } catch {
    return false
  }
}

export type SandboxCgroup = {
  memory: boolean
  pids: boolean
  // cgroup.procs files the spawned process writes its pid into before exec'ing bubblewrap
  procsFiles: string[]
  dirs: string[] // emptied as dispose() removes them
  pidsInGroup(): number[]
  // Processes the kernel's OOM killer has killed in the group (0 without a memory group).
  oomKills(): number
  dispose(): void
}

// Groups left behind by a host that died before cleaning up ("vis-<host pid>-...").
function reapStale(parent: string): void {
  let names: string[] = []
  try {
    names = readdirSync(parent)
  } catch {
    return
  }
  for (const name of names) {
    const m = /^vis-(?:layers-)?(\d+)-/.exec(name)
    if (!m || pidExists(Number(m[1]))) continue
    try {
      rmdirSync(join(parent, name))
    } catch {
      // still has processes: leave it
    }
  }
}

// Makes one child group per available controller with the policy's limits. A
// controller that cannot be used is simply absent (the caller reports it).
export function createSandboxCgroup(
  layout: CgroupLayout,
  name: string,
  limits: { memoryMb: number; processes: number },
): SandboxCgroup {
  const dirs: string[] = []
  const made = { memory: false, pids: false }
  let memoryDir: { dir: string; version: 'v1' | 'v2' } | undefined
  for (const c of [layout.memory, layout.pids]) {
    if (!c) continue
    reapStale(c.parent)
    const dir = join(c.parent, name)
    try {
      mkdirSync(dir)
    } catch {
      continue
    }
    try {
      if (c.name === 'memory') {
        const bytes = String(limits.memoryMb * 1024 * 1024)
        writeFileSync(join(dir, c.limitFile), bytes)
        // v1 counts swap separately: without this the group just swaps instead of dying.
        const memsw = join(dir, 'memory.memsw.limit_in_bytes')
        if (c.version === 'v1' && existsSync(memsw)) writeFileSync(memsw, bytes)
        if (c.version === 'v2' && existsSync(join(dir, 'memory.swap.max')))
          writeFileSync(join(dir, 'memory.swap.max'), '0')
      } else {
        writeFileSync(join(dir, c.limitFile), String(limits.processes))
      }
      dirs.push(dir)
      made[c.name] = true
      if (c.name === 'memory') memoryDir = { dir, version: c.version }
    } catch {
      try {
        rmdirSync(dir)
      } catch {}
    }
  }
  return {
    ...made,
    procsFiles: dirs.map((d) => join(d, 'cgroup.procs')),
    dirs,
    pidsInGroup() {
      const pids = new Set<number>()
      for (const d of dirs) {
        for (const p of readOr(join(d, 'cgroup.procs'), '').split('\n')) if (p) pids.add(Number(p))
      }
      return [...pids]
    },
    oomKills() {
      if (!memoryDir) return 0
      // v1: "oom_kill N" in memory.oom_control; v2: "oom_kill N" in memory.events.
      const file = memoryDir.version === 'v1' ? 'memory.oom_control' : 'memory.events'
      const m = /^oom_kill (\d+)$/m.exec(readOr(join(memoryDir.dir, file), ''))
      return m ? Number(m[1]) : 0
    },
    dispose() {
      for (const d of [...dirs]) {
        try {
          rmdirSync(d)
          dirs.splice(dirs.indexOf(d), 1)
        } catch {
          // still populated (a process is exiting): the caller retries
        }
      }
    },
  }
}
