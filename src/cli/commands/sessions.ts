import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { type DraftDiff, type DraftState, readOnlyDrafts } from '../../drafts/drafts.js'
import { blockView, sessionView } from '../../engine/views.js'
import { formatPythonForDisplay } from '../../format/index.js'
import {
  exportTranscript,
  fence,
  inlineText,
  openStore,
  renderMarkdown,
  type Store,
} from '../../persistence/index.js'
import { describeSurvived } from '../../sessions/survived.js'
import { VisError } from '../../util/errors.js'
import { draftLine } from '../agent/draft-command.js'
import { agentMarkdown, sessionAgent, sessionTurns, turnLines } from '../agent/show.js'
import { visibleControls, visibleJson } from '../agent/visible.js'
import { type Command, subcommands } from '../command.js'

const usage = `Usage: vis sessions list [--state open|closed|all] [--limit N] [--json]
       vis sessions show <id> [--json]
       vis sessions export <id> [--format md|json] [-o FILE]

Read the sessions stored under the vis home (VIS_HOME or ~/.vis). Works while
\`vis serve\` runs: the database is shared safely.

  list     newest first: id, state, blocks, created, title
  show     one session, its blocks (status, duration, first line of code) and its agent
           turns with each tool call of their journal
  export   the whole transcript, as Markdown (default) or as the canonical JSON

What a session's sandbox wrote (output, the draft's diff, file names) can carry control
characters that make a terminal erase or rewrite lines. Printed (to a terminal or a pipe,
which may end at one), they are shown, never sent: CR as \\r, ESC as ^[, other C0 as ^X,
C1 as \\x9b (JSON keeps its value: DEL and C1 as \\u escapes). \`export -o FILE\` writes
the exact bytes to FILE instead.`

const oneLine = (s: string, max = 60): string => {
  const first = s.split('\n').find((l) => l.trim() !== '') ?? ''
  return first.length > max ? `${first.slice(0, max - 1)}…` : first
}

function withStore<T>(fn: (store: Store) => T): T {
  const store = openStore()
  try {
    return fn(store)
  } finally {
    store.close()
  }
}

// The session's draft, read from the store and the draft's directory (no engine needed).
async function draftOf(store: Store, id: string): Promise<{ state: DraftState; diff: DraftDiff }> {
  const drafts = readOnlyDrafts(store.db, store.home)
  return { state: await drafts.state(id), diff: await drafts.diff(id) }
}

function requireId(id: string | undefined, sub: string): string {
  if (!id) throw new VisError('cli.missing-argument', `vis sessions ${sub} needs a session id.\n\n${usage}`)
  return id
}

function list(argv: string[]): number {
  const { values } = parseArgs({
    args: argv,
    options: {
      state: { type: 'string', default: 'all' },
      limit: { type: 'string', default: '50' },
      json: { type: 'boolean', default: false },
    },
  })
  const state = values.state
  if (state !== 'open' && state !== 'closed' && state !== 'all') {
    throw new VisError('cli.bad-option', `--state must be open, closed or all, not ${state}`)
  }
  const limit = Number(values.limit)
  if (!Number.isInteger(limit) || limit < 1)
    throw new VisError('cli.bad-option', '--limit must be a positive integer')
  return withStore((store) => {
    const rows = store.sessions.list({ state, limit })
    if (values.json) {
      const views = rows.map((s) => sessionView(s, 'dormant', false))
      process.stdout.write(`${visibleJson({ sessions: views })}\n`)
      return 0
    }
    if (rows.length === 0) {
      process.stdout.write(`no sessions in ${store.path}\n`)
      return 0
    }
    const counts = new Map(
      (
        store.db.prepare('SELECT session_id, count(*) AS n FROM blocks GROUP BY session_id').all() as {
          session_id: string
          n: number
        }[]
      ).map((r) => [r.session_id, r.n]),
    )
    const width = Math.max(2, ...rows.map((r) => r.id.length))
    process.stdout.write(`${'ID'.padEnd(width)}  STATE   BLOCKS  CREATED                   TITLE\n`)
    for (const s of rows) {
      const st = s.closedAt === null ? 'open' : 'closed'
      process.stdout.write(
        `${s.id.padEnd(width)}  ${st.padEnd(6)}  ${String(counts.get(s.id) ?? 0).padStart(6)}  ${new Date(s.createdAt).toISOString().padEnd(24)}  ${visibleControls(s.title ?? '')}\n`,
      )
    }
    return 0
  })
}

async function show(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  })
  const id = requireId(positionals[0], 'show')
  const store = openStore()
  try {
    const s = store.sessions.get(id)
    if (!s)
      throw new VisError('session.not-found', `No session with id ${id} in ${store.path}.`, { sessionId: id })
    const attachments = store.attachments.listBySession(id)
    const blocks = store.blocks.listBySession(id).map((b) => blockView(b, attachments))
    const turns = sessionTurns(store, id)
    const draft = await draftOf(store, id)
    if (values.json) {
      const view = sessionView(s, 'dormant', false, draft.state)
      process.stdout.write(`${visibleJson({ ...view, blocks, turns, draft_diff: draft.diff })}\n`)
      return 0
    }
    const out = [
      `session  ${s.id}${s.title ? `  (${s.title})` : ''}`,
      `state    ${s.closedAt === null ? 'open' : `closed ${new Date(s.closedAt).toISOString()}`}`,
      `created  ${new Date(s.createdAt).toISOString()}`,
      `policy   ${JSON.stringify(s.policy)}`,
      `events   ${s.lastEventSeq}`,
      `works on ${draftLine(draft.state)}`,
      `blocks   ${blocks.length}`,
    ]
    for (const b of blocks) {
      const outcome = b.status === 'running' ? 'running' : b.error ? `error: ${b.error.code ?? ''}` : 'ok'
      const ms = b.duration_ms === null ? '' : `${b.duration_ms} ms`
      const att = b.attachments.length > 0 ? `  [${b.attachments.length} attachment(s)]` : ''
      out.push(
        `  #${String(b.position).padEnd(4)} ${outcome.padEnd(24)} ${ms.padStart(9)}  ${oneLine(b.code)}${att}`,
      )
      if (b.survived) out.push(`        survived: ${describeSurvived(b.survived)}`)
    }
    out.push(...turnLines(turns))
    if (draft.diff.diff) out.push('', draft.diff.diff.trimEnd())
    // Code, output, turn text and the diff are the sandbox's and the model's (visible.ts).
    process.stdout.write(`${visibleControls(out.join('\n'))}\n`)
    return 0
  } finally {
    store.close()
  }
}

async function exportSession(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { format: { type: 'string', default: 'md' }, output: { type: 'string', short: 'o' } },
  })
  const id = requireId(positionals[0], 'export')
  if (values.format !== 'md' && values.format !== 'json') {
    throw new VisError('cli.bad-option', `--format must be md or json, not ${values.format}`)
  }
  const store = openStore()
  try {
    if (!store.sessions.get(id)) {
      throw new VisError('session.not-found', `No session with id ${id} in ${store.path}.`, { sessionId: id })
    }
    const t = exportTranscript(store, id)
    const draft = await draftOf(store, id)
    const agent = sessionAgent(store, id)
    // Markdown is for people: code is shown formatted (ruff); the JSON keeps it as written.
    if (values.format === 'json') {
      const whole = { ...t, agent, draft: { ...draft.state, ...draft.diff } }
      if (values.output) writeOutput(values.output, `${JSON.stringify(whole, null, 2)}\n`)
      else process.stdout.write(`${visibleJson(whole)}\n`)
      return 0
    }
    let md = renderMarkdown(t, { formatCode: formatPythonForDisplay }) + agentMarkdown(agent)
    if (draft.state.draft) {
      // The diff is text the sandbox wrote: fenced by markdown.ts's fence (longer than any backtick
      // run inside, counted in a loop: a spread of 150,000 runs overflowed the stack, pass 14), and
      // the draft's line (its label) as escaped prose.
      md += `\n## Draft\n\n${inlineText(draftLine(draft.state))}\n\n${fence(draft.diff.diff, 'diff')}`
    }
    if (values.output) writeOutput(values.output, md)
    else process.stdout.write(visibleControls(md))
    return 0
  } finally {
    store.close()
  }
}

// The file a person asked for gets the transcript's exact bytes (their editor or tool decides
// how to show them); only what goes to stdout is made visible.
function writeOutput(path: string, text: string): void {
  try {
    writeFileSync(path, text)
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message
    throw new VisError('cli.bad-option', `-o ${path}: cannot write the export there (${why})`, { path })
  }
}

export const sessions: Command = {
  name: 'sessions',
  usage,
  run: subcommands('sessions', usage, { list, show, export: exportSession }),
}
