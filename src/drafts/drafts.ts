import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { chmod, lstat, mkdir, rm } from 'node:fs/promises'
import { isAbsolute, join, relative } from 'node:path'
import { promisify } from 'node:util'
import { z } from 'zod'
import { atFd, closeFd, statFd, Tree } from '../confinement/beneath.js'
import { draftMount, releaseDraftMount } from '../confinement/draft-mount.js'
import { hostPlacesWithin } from '../confinement/mount-sources.js'
import { rootChanged, rootIdentity } from '../confinement/root-guard.js'
import type { Overlay } from '../contracts/jail-policy.js'
import type { Db } from '../persistence/statements.js'
import { VisError } from '../util/errors.js'
import { draftsDir } from '../util/home-parts.js'
import { hostProgramPath } from '../util/host-programs.js'
import { realish } from '../util/real-path.js'
import { issuesText } from '../util/zod-issues.js'
import { findConflicts, landChanges } from './apply.js'
import { baseClock } from './base-clock.js'
import { BaseRecord } from './base-record.js'
import { type Change, gitMode, scanChanges } from './changes.js'
import { diffDigest } from './diff-digest.js'
import { renderDiff } from './render.js'
import { type DraftRecord, DraftsRepo } from './repo.js'

const execFileP = promisify(execFile)

export const DraftLabelSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[^\0\n\r]+$/, 'one line, no NUL')
export const ApplyOptionsSchema = z
  .object({
    // Conflicting files keep the real root's version (the draft's changes to them dropped)...
    theirs: z.boolean().optional(),
    // ...or get the draft's version over whatever the real root has now.
    ours: z.boolean().optional(),
    // The digest of the diff that was reviewed (diff().digest): the apply is refused
    // (draft.changed) when the draft no longer hashes to it.
    expect: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'a diff digest: 64 hex digits')
      .optional(),
  })
  .strict()
  .refine((o) => !(o.theirs && o.ours), { message: 'choose theirs or ours, not both' })
export type ApplyOptions = z.infer<typeof ApplyOptionsSchema>

export const DraftInfoSchema = z.object({
  id: z.string(),
  label: z.string(),
  kind: z.enum(['copy', 'blank']),
  root: z.string(),
  base_at: z.string(),
  files_changed: z.number().int().nullable(),
})
export const DraftStateSchema = z.object({
  mode: z.enum(['trunk', 'draft']),
  draft: DraftInfoSchema.nullable(),
})
export type DraftState = z.infer<typeof DraftStateSchema>
export const ApplyResultSchema = z.object({
  // 'noop': the session is on the trunk, nothing to land.
  status: z.enum(['applied', 'noop']),
  draft: z.string().nullable(),
  landed: z.array(z.string()),
  kept_theirs: z.array(z.string()),
})
export type ApplyResult = z.infer<typeof ApplyResultSchema>
export const ChangeViewSchema = z.object({
  path: z.string(),
  status: z.enum(['added', 'changed', 'deleted', 'renamed']),
  from: z.string().optional(),
  type: z.enum(['file', 'symlink']),
  mode: z.string(),
  old_mode: z.string().optional(),
})
export const DraftDiffSchema = z.object({
  draft: z.string().nullable(),
  changes: z.array(ChangeViewSchema),
  diff: z.string(),
  // sha256 of what this diff shows; apply({ expect: digest }) lands only that. null: no draft.
  digest: z.string().nullable(),
})
export type DraftDiff = z.infer<typeof DraftDiffSchema>

// Bad input is a VisError a person can act on (HTTP 400), not a bare ZodError.
function parseInput<S extends z.ZodTypeAny>(
  schema: S,
  value: unknown,
  what: string,
  sessionId: string,
): z.output<S> {
  const r = schema.safeParse(value)
  if (r.success) return r.data
  throw new VisError('draft.invalid', `${what}: ${issuesText(r.error)}`, { sessionId, op: 'draft' })
}

// What the drafts need from the engine that owns the sessions.
export type DraftHost = {
  // The session's primary root (the one a draft covers); undefined: it has none.
  primaryRoot(sessionId: string): string | undefined
  // The identity the root was pinned to when the session was created (root-guard.ts), if this
  // process pinned it: a diff or apply through a root that now names another directory is refused.
  rootPin?(sessionId: string, root: string): string | undefined
  // Runs fn while no block of the session runs (queued behind them, blocking later ones).
  exclusive<T>(sessionId: string, fn: () => Promise<T>): Promise<T>
  // Ends the session's worker: the next block starts one jailed for the new state (trunk
  // or draft) and restores the session's definitions.
  replaceWorker(sessionId: string): Promise<void>
  record(
    sessionId: string,
    type: 'draft.created' | 'draft.applied' | 'draft.abandoned',
    data: Record<string, unknown>,
  ): void
}

// overlayfs mount options are comma- and colon-separated, with no escaping on this path.
const UNSAFE = /[,:\\]/

// A session's drafts: its primary root becomes an overlay (the real root read-only below,
// the draft's upper directory under the vis home above), so every block, tool process
// and host file tool works on the draft while the real directory stays untouched. The
// upper directory holds only what the draft wrote: a draft costs nothing to create or
// throw away. apply lands the changes in the real root, file by file.
export class Drafts {
  readonly repo: DraftsRepo
  // files_changed per session, refreshed after blocks (views are synchronous).
  private readonly counts = new Map<string, number>()
  // What each draft knows of the real root at its base (base-record.ts), by draft id.
  private readonly bases = new Map<string, Promise<BaseRecord>>()
  // Child sessions (the agent's sub_loop) working in the draft of the session that owns it:
  // child id → owner id. In memory only: a child lives as long as its parent's block.
  private readonly lent = new Map<string, string>()

  constructor(
    db: Db,
    private readonly home: string,
    private readonly host: DraftHost,
  ) {
    this.repo = new DraftsRepo(db)
  }

  // The library surface for one session: `engine.draft(id).create('label')`, ….diff() is
  // the unified diff as a string (changes() has the file list too).
  for(sessionId: string) {
    return {
      create: (label: string) => this.create(sessionId, label, 'copy'),
      blank: (label: string) => this.create(sessionId, label, 'blank'),
      diff: async () => (await this.diff(sessionId)).diff,
      changes: () => this.diff(sessionId),
      apply: (options?: ApplyOptions) => this.apply(sessionId, options),
      abandon: (why?: string) => this.abandon(sessionId, why),
      state: () => this.state(sessionId),
    }
  }

  // A child session (the agent's sub_loop) of a parent in a draft works in that draft: its jails
  // enter the same overlay mount and its host tools open paths through it, so what it writes
  // lands in the draft, never in the real root. Called before the child's first worker starts.
  // A child root strictly inside the draft's root is refused: roots are bound from directory fds
  // the host opens, which would be the real directory behind the draft.
  lend(childId: string, parentId: string, roots: readonly string[]): void {
    const owner = this.lent.get(parentId) ?? parentId
    const d = this.repo.active(owner)
    if (!d) return
    const inside = roots.find((r) => r !== d.root && r.startsWith(`${d.root}/`))
    if (inside !== undefined) {
      throw new VisError(
        'draft.child-root-inside',
        `the parent session works in draft "${d.label}" of ${d.root}; a child cannot be given ${inside} ` +
          `inside it (it would see the real files behind the draft). Give it ${d.root} itself, or apply the draft first`,
        { sessionId: parentId, op: 'draft.lend', path: inside },
      )
    }
    if (roots.includes(d.root)) this.lent.set(childId, owner)
  }

  // The session's draft: its own, or the one it was lent.
  private activeOf(sessionId: string): DraftRecord | undefined {
    const own = this.repo.active(sessionId)
    if (own) return own
    const owner = this.lent.get(sessionId)
    return owner === undefined ? undefined : this.repo.active(owner)
  }

  // A lent draft is applied, abandoned or replaced only by the session that owns it.
  private refuseLent(sessionId: string, op: string): void {
    const owner = this.lent.get(sessionId)
    if (owner === undefined || !this.repo.active(owner)) return
    throw new VisError(
      'draft.lent',
      `session ${sessionId} works in the draft of its parent session ${owner}; ${op} it there`,
      { sessionId, op: `draft.${op}` },
    )
  }

  // The overlay a session's jails mount, while it is in a draft.
  overlayFor(sessionId: string): Overlay | undefined {
    const d = this.activeOf(sessionId)
    if (!d) return undefined
    if (d.kind !== 'blank') return { root: d.root, lower: d.root, upper: join(d.dir, 'upper'), dir: d.dir }
    const keep = hostPlacesWithin(d.root)
    return {
      root: d.root,
      lower: join(d.dir, 'empty'),
      upper: join(d.dir, 'upper'),
      dir: d.dir,
      ...(keep.length > 0 ? { keep } : {}),
    }
  }

  // The namespaces of the session's draft mount (undefined on the trunk): processes that
  // are not jailed (the trusted extension worker) start in them to see the draft.
  async namespacesFor(sessionId: string): Promise<{ user: number; mnt: number } | undefined> {
    const o = this.overlayFor(sessionId)
    if (!o) return undefined
    const { user, mnt } = await draftMount(o)
    return { user, mnt }
  }

  // A blank draft's lower layer is empty, but the jail masks the extension directories
  // inside the root (hidden) and bubblewrap needs each to exist: they are made, empty, in
  // the lower layer before its overlay is first mounted. They are no change of the draft.
  // So are the host places the holder shows from the real root (Overlay.keep).
  prepareMasks(sessionId: string, hidden: string[]): void {
    const o = this.overlayFor(sessionId)
    if (!o || o.lower === o.root) return
    const real = realish(o.root)
    for (const h of [...hidden, ...(o.keep ?? []).map((k) => join(o.root, relative(real, k)))]) {
      const rel = relative(o.root, h)
      if (rel && !rel.startsWith('..') && !isAbsolute(rel)) mkdirSync(join(o.lower, rel), { recursive: true })
    }
  }

  async create(sessionId: string, label: string, kind: 'copy' | 'blank' = 'copy'): Promise<DraftState> {
    const l = parseInput(DraftLabelSchema, label, 'a draft label', sessionId)
    this.refuseLent(sessionId, 'create')
    return this.host.exclusive(sessionId, async () => {
      const root = this.host.primaryRoot(sessionId)
      const ctx = { sessionId, op: 'draft.create' }
      if (root === undefined)
        throw new VisError('draft.no-root', `session ${sessionId} has no root to draft`, ctx)
      if (UNSAFE.test(root))
        throw new VisError(
          'draft.path-unsupported',
          `a draft cannot cover ${root}: its path has ',', ':' or '\\'`,
          {
            ...ctx,
            path: root,
          },
        )
      const existing = this.repo.active(sessionId)
      if (existing)
        throw new VisError(
          'draft.exists',
          `session ${sessionId} is already in draft "${existing.label}"; apply or abandon it first`,
          ctx,
        )
      const id = `drf_${randomUUID().replaceAll('-', '')}`
      const dir = join(draftsDir(this.home), id)
      if (UNSAFE.test(dir))
        throw new VisError(
          'draft.path-unsupported',
          `the vis home ${this.home} has ',', ':' or '\\' in its path`,
          ctx,
        )
      await mkdir(join(dir, 'upper'), { recursive: true })
      await mkdir(join(dir, 'empty'))
      // The base time comes from the filesystem's own clock (a file's ctime), the clock the
      // conflict check compares real files' ctimes with, read once it moved past this moment.
      const baseAt = await baseClock(join(dir, 'base'), `${sessionId}\n`)
      const d = this.repo.create({ id, sessionId, label: l, kind, root, dir, baseAt })
      this.counts.set(sessionId, 0)
      await this.host.replaceWorker(sessionId)
      this.host.record(sessionId, 'draft.created', { draft_id: id, label: l, kind })
      return this.stateOf(d, 0)
    })
  }

  async state(sessionId: string): Promise<DraftState> {
    const d = this.activeOf(sessionId)
    if (!d) return { mode: 'trunk', draft: null }
    const changes = await this.trees(d, (upper, real) => this.changesOf(d, upper, real))
    return this.stateOf(d, changes.length)
  }

  // For synchronous views: the count is the one last measured (after the last block).
  // null until measured (a draft from an earlier process): a measurement starts now.
  stateNow(sessionId: string): DraftState {
    const d = this.activeOf(sessionId)
    if (!d) return { mode: 'trunk', draft: null }
    const n = this.counts.get(sessionId)
    if (n === undefined) void this.refresh(sessionId).catch(() => undefined)
    return this.stateOf(d, n ?? null)
  }

  async refresh(sessionId: string): Promise<void> {
    const d = this.activeOf(sessionId)
    if (d) this.counts.set(sessionId, (await this.trees(d, (u, r) => this.changesOf(d, u, r))).length)
  }

  async diff(sessionId: string): Promise<DraftDiff> {
    const d = this.activeOf(sessionId)
    if (!d) return { draft: null, changes: [], diff: '', digest: null }
    return this.trees(d, async (upper, real) => {
      const changes = await this.changesOf(d, upper, real)
      this.counts.set(sessionId, changes.length)
      const diff = await renderDiff(changes, upper, real)
      return {
        draft: d.id,
        changes: changes.map(changeView),
        diff,
        digest: await diffDigest(changes, upper, diff),
      }
    })
  }

  async apply(sessionId: string, options: ApplyOptions = {}): Promise<ApplyResult> {
    const o = parseInput(ApplyOptionsSchema, options, 'apply options', sessionId)
    this.refuseLent(sessionId, 'apply')
    return this.host.exclusive(sessionId, async () => {
      const d = this.repo.active(sessionId)
      if (!d) return { status: 'noop', draft: null, landed: [], kept_theirs: [] }
      return this.trees(d, (upper, real) => this.land(d, o, upper, real))
    })
  }

  private async land(d: DraftRecord, o: ApplyOptions, upper: Tree, real: Tree): Promise<ApplyResult> {
    const sessionId = d.sessionId
    // Checking a reviewed digest: the worker stops first, so nothing writes the draft between
    // the check and the landing.
    if (o.expect) await this.host.replaceWorker(sessionId)
    const changes = await this.changesOf(d, upper, real)
    if (o.expect && (await diffDigest(changes, upper, await renderDiff(changes, upper, real))) !== o.expect)
      throw new VisError(
        'draft.changed',
        `draft "${d.label}" changed since the diff that was reviewed (its digest differs); show the diff again and apply with its digest`,
        { sessionId, op: 'draft.apply' },
      )
    const conflicts = [
      ...new Set([
        ...(await findConflicts(changes, real, d.baseAt)),
        ...(await (await this.baseOf(d)).vanished(real, changes)),
      ]),
    ].sort()
    if (conflicts.length > 0 && !o.theirs && !o.ours) {
      throw new VisError(
        'draft.conflict',
        `these files changed in ${d.root} since draft "${d.label}" began, or may have been deleted there: ${conflicts.join(', ')}. ` +
          'Apply with theirs (keep the real files) or ours (the draft wins), or abandon the draft',
        { sessionId, op: 'draft.apply', path: conflicts[0], conflicts },
      )
    }
    const skip = new Set(o.theirs ? conflicts : [])
    // The worker goes first: nothing writes to the draft while it lands.
    await this.host.replaceWorker(sessionId)
    const landed = await landChanges(changes, upper, real, skip)
    this.repo.end(d.id, 'applied', null)
    await this.discard(d)
    this.host.record(sessionId, 'draft.applied', {
      draft_id: d.id,
      label: d.label,
      landed,
      kept_theirs: [...skip],
    })
    return { status: 'applied', draft: d.id, landed, kept_theirs: [...skip] }
  }

  async abandon(sessionId: string, why?: string): Promise<DraftState> {
    const reason = why === undefined ? null : parseInput(z.string().max(2000), why, 'the reason', sessionId)
    this.refuseLent(sessionId, 'abandon')
    return this.host.exclusive(sessionId, async () => {
      const d = this.repo.active(sessionId)
      if (!d)
        throw new VisError(
          'draft.none',
          `session ${sessionId} is on the trunk: there is no draft to abandon`,
          {
            sessionId,
            op: 'draft.abandon',
          },
        )
      this.repo.end(d.id, 'abandoned', reason)
      await this.host.replaceWorker(sessionId)
      await this.discard(d)
      this.host.record(sessionId, 'draft.abandoned', { draft_id: d.id, label: d.label, reason })
      return { mode: 'trunk', draft: null }
    })
  }

  private async changesOf(d: DraftRecord, upper: Tree, real: Tree): Promise<Change[]> {
    const seen: Parameters<BaseRecord['observe']>[1] = []
    const changes = await scanChanges(upper, real, d.kind, (p, st) => seen.push([p, st]))
    await (await this.baseOf(d)).observe(real, seen)
    return changes
  }

  // The draft's upper directory and its real root, each held by a directory fd for one
  // operation: the sandbox can change what is below either at any time (confinement/beneath.ts).
  private async trees<T>(d: DraftRecord, fn: (upper: Tree, real: Tree) => Promise<T>): Promise<T> {
    const upper = Tree.open(join(d.dir, 'upper'))
    let real: Tree
    try {
      real = Tree.open(d.root)
    } catch (err) {
      await upper.close()
      throw new VisError(
        'draft.root-missing',
        `the draft's real root ${d.root} cannot be opened (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        {
          sessionId: d.sessionId,
          op: 'draft',
          path: d.root,
        },
      )
    }
    try {
      const pin = this.host.rootPin?.(d.sessionId, d.root)
      if (pin !== undefined && rootIdentity(real.fd) !== pin) {
        throw rootChanged(d.root, { sessionId: d.sessionId, op: 'draft' })
      }
      return await fn(upper, real)
    } finally {
      await Promise.all([upper.close(), real.close()])
    }
  }

  private baseOf(d: DraftRecord): Promise<BaseRecord> {
    let b = this.bases.get(d.id)
    if (!b) {
      b = BaseRecord.open(d.dir, d.baseAt)
      this.bases.set(d.id, b)
      b.catch(() => this.bases.delete(d.id))
    }
    return b
  }

  private stateOf(d: DraftRecord, files: number | null): DraftState {
    return {
      mode: 'draft',
      draft: {
        id: d.id,
        label: d.label,
        kind: d.kind,
        root: d.root,
        base_at: new Date(Math.floor(d.baseAt)).toISOString(),
        files_changed: files,
      },
    }
  }

  // Ends the draft's mount holder (its jails are gone); the next jail starts another.
  // A child's lent draft stays mounted: it is its owner's.
  async releaseMount(sessionId: string): Promise<void> {
    if (this.lent.delete(sessionId)) {
      this.counts.delete(sessionId)
      return
    }
    const o = this.overlayFor(sessionId)
    if (o) await releaseDraftMount(o.dir)
  }

  private async discard(d: DraftRecord): Promise<void> {
    await releaseDraftMount(d.dir)
    this.counts.delete(d.sessionId)
    this.bases.delete(d.id)
    await removeTree(d.dir)
  }
}

// The drafts of a store opened without an engine (`vis sessions show/export`): state and
// diff only; anything that would change a session is refused.
export function readOnlyDrafts(db: Db, home: string): Drafts {
  const refuse = (): never => {
    throw new VisError(
      'draft.read-only',
      'drafts change only through the engine that owns the session (vis serve)',
    )
  }
  return new Drafts(db, home, {
    primaryRoot: () => undefined,
    exclusive: refuse,
    replaceWorker: refuse,
    record: refuse,
  })
}

// overlayfs leaves its work directories mode 000: an unprivileged owner must open them up
// before it can remove them.
// Each directory is opened below the last without following a link (a link swapped in by a
// process still writing the upper directory would otherwise get its target chmod-ed).
async function removeTree(dir: string): Promise<void> {
  if (!(await lstat(dir).catch(() => undefined))) return
  const tree = Tree.open(dir)
  try {
    const open = async (rel: string): Promise<void> => {
      let fd: number | undefined
      try {
        fd = tree.openPath(rel)
      } catch (err) {
        // Past PATH_MAX: left to rm below (overlayfs' mode-000 work directories sit at the top).
        if ((err as NodeJS.ErrnoException).code === 'ENAMETOOLONG') return
        throw err
      }
      if (fd === undefined) return
      try {
        if (!(await statFd(fd)).isDirectory()) return
        // The O_PATH fd's own link: this very directory, whatever its path says now.
        await chmod(atFd(fd), 0o700).catch(() => undefined)
      } finally {
        await closeFd(fd)
      }
      for (const e of await tree.readdir(rel).catch(() => [])) {
        if (e.isDirectory()) await open(rel ? `${rel}/${e.name}` : e.name)
      }
    }
    await open('')
  } finally {
    await tree.close()
  }
  await rm(dir, { recursive: true, force: true }).catch(async (err: NodeJS.ErrnoException) => {
    // Node's recursive rm walks by path and stops at PATH_MAX; coreutils' rm walks with
    // openat, so a tree nested past it still goes.
    if (err.code !== 'ENAMETOOLONG') throw err
    const rmProgram = hostProgramPath('rm')
    if (!rmProgram) throw err
    await execFileP(rmProgram, ['-rf', '--one-file-system', '--', dir])
  })
}

function changeView(c: Change): z.infer<typeof ChangeViewSchema> {
  return {
    path: c.path,
    status: c.status,
    ...(c.from !== undefined ? { from: c.from } : {}),
    type: c.type,
    mode: gitMode(c.type, c.mode),
    ...(c.oldMode !== undefined ? { old_mode: gitMode(c.type, c.oldMode) } : {}),
  }
}
