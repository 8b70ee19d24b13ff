import type { ApplyOptions, DraftState } from '../../drafts/drafts.js'
import type { Engine } from '../../engine/index.js'
import { VisError } from '../../util/errors.js'

export const DRAFT_USAGE = `  /draft               whether the session works on the trunk or in a draft
  /draft new LABEL     work on an isolated copy of the root (the real directory stays untouched)
  /draft blank LABEL   the same, starting from an empty root
  /draft diff          what the draft changed, as a unified diff
  /draft apply [--theirs|--ours]
                       land exactly the changes the last /draft diff showed in the real root
                       (refused if the draft moved since; refused on conflicts unless told
                       whose version wins: --theirs keeps the real files, --ours the draft's)
  /draft abandon [WHY] discard the draft, recording why`

// How a session's draft state reads to a person ("trunk" or the draft's label and size).
export function draftLine(state: DraftState): string {
  const d = state.draft
  if (!d) return 'trunk'
  return `draft "${d.label}" (${d.kind}, since ${d.base_at}, ${d.files_changed ?? '?'} file(s) changed)`
}

const bad = (message: string) => new VisError('cli.bad-draft-command', `${message}\n${DRAFT_USAGE}`)

function applyOptions(args: string[]): ApplyOptions {
  const o: ApplyOptions = {}
  for (const a of args) {
    if (a === '--theirs') o.theirs = true
    else if (a === '--ours') o.ours = true
    else throw bad(`/draft apply takes --theirs or --ours, not ${JSON.stringify(a)}`)
  }
  if (o.theirs && o.ours) throw bad('/draft apply: choose --theirs or --ours, not both')
  return o
}

// The digest of the diff `/draft diff` last showed, per session: `/draft apply` lands exactly that
// (apply({ expect }) stops the worker, rehashes, draft.changed if the draft moved since).
const shownDigest = new Map<string, string>()

// `/draft …` in `vis chat`: the session's draft through the engine's library surface
// (engine.draft). Returns what to print; errors are VisErrors the REPL reports.
export async function runDraftCommand(engine: Engine, sessionId: string, line: string): Promise<string> {
  const m = /^\/draft(?:\s+(\S+)(?:\s+(.*))?)?$/s.exec(line.trim())
  if (!m) throw bad(`not a /draft command: ${line}`)
  const sub = m[1] ?? 'state'
  const rest = (m[2] ?? '').trim()
  const draft = engine.draft(sessionId)
  switch (sub) {
    case 'state':
      if (rest) throw bad('/draft state takes no arguments')
      return `this session works on the ${draftLine(await draft.state())}`
    case 'new':
    case 'blank': {
      if (!rest) throw bad(`/draft ${sub} needs a label, e.g. /draft ${sub} try the refactor`)
      const s = await draft[sub === 'new' ? 'create' : 'blank'](rest)
      const how = sub === 'new' ? 'a copy of' : 'an empty view of'
      return `now in draft "${rest}": ${how} ${s.draft?.root}; the real directory stays untouched until /draft apply`
    }
    case 'diff': {
      if (rest) throw bad('/draft diff takes no arguments')
      const st = await draft.state()
      if (st.draft === null) return 'no draft: this session works directly in its root (the trunk)'
      // A thread or process a block left running could rewrite the draft after it is shown: the
      // worker stops first (its globals are restored), and the apply holds to this diff's digest.
      await engine.stopWorker(sessionId, '/draft diff: the diff is shown for review')
      const d = await draft.changes()
      if (d.draft === null) return 'no draft: this session works directly in its root (the trunk)'
      if (d.digest) shownDigest.set(sessionId, d.digest)
      return d.diff === '' ? 'the draft has no changes yet' : d.diff.trimEnd()
    }
    case 'apply': {
      const opts = applyOptions(rest ? rest.split(/\s+/) : [])
      const st = await draft.state()
      if (st.draft === null) return 'no draft to apply: this session is on the trunk'
      const expect = shownDigest.get(sessionId)
      if (expect === undefined)
        throw bad('/draft apply lands what you reviewed: show it first with /draft diff, then /draft apply')
      const r = await draft.apply({ ...opts, expect })
      shownDigest.delete(sessionId)
      if (r.status === 'noop') return 'no draft to apply: this session is on the trunk'
      const out = [
        `applied: ${r.landed.length} file(s) landed${r.landed.length ? `: ${r.landed.join(', ')}` : ''}`,
      ]
      if (r.kept_theirs.length) out.push(`kept the real root's version of: ${r.kept_theirs.join(', ')}`)
      out.push('back on the trunk')
      return out.join('\n')
    }
    case 'abandon': {
      const before = await draft.state()
      await draft.abandon(rest || undefined)
      return `abandoned draft "${before.draft?.label}"${rest ? ` (${rest})` : ''}; back on the trunk, the real directory as it was`
    }
    default:
      throw bad(`unknown /draft command ${JSON.stringify(sub)}`)
  }
}
