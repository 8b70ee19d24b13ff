import type { Engine } from '../../engine/index.js'
import { errorMessage, VisError } from '../../util/errors.js'
import type { Lines } from './ask.js'
import { visibleControls } from './visible.js'

// The review mode of vis run and vis chat (src/confinement/modes.ts): each turn runs in a draft of
// the workspace root; at its end the person sees the diff and decides whether it lands.

export type ReviewDecision = 'apply' | 'no-apply' | 'ask'

// --apply / --no-apply, for a run nobody can ask.
export function reviewDecision(v: { apply?: boolean; 'no-apply'?: boolean }): ReviewDecision {
  if (v.apply && v['no-apply']) throw new VisError('cli.bad-option', 'choose --apply or --no-apply, not both')
  return v.apply ? 'apply' : v['no-apply'] ? 'no-apply' : 'ask'
}

// The turn's draft, made unless the session is in one already (a --session continued).
export async function startReview(engine: Engine, sessionId: string, label: string): Promise<void> {
  const draft = engine.draft(sessionId)
  if ((await draft.state()).draft) return
  await draft.create(label)
}

// Shows what the turn changed and lands it or drops it: `decision`, else the person's answer
// on the terminal (`lines`), else (no terminal) nothing lands. Returns what happened.
export async function finishReview(
  engine: Engine,
  sessionId: string,
  decision: ReviewDecision,
  out: NodeJS.WritableStream,
  lines: Lines | undefined,
): Promise<'applied' | 'dropped' | 'unchanged'> {
  const draft = engine.draft(sessionId)
  // A thread or process the turn left running could rewrite the draft after the diff is shown:
  // the worker stops first, and the apply below lands only what hashes to the shown diff.
  await engine.stopWorker(sessionId, 'review: the turn ended, its diff is shown')
  const changes = await draft.changes()
  if (changes.draft === null) return 'unchanged'
  if (changes.diff === '') {
    await draft.abandon('review: the turn changed nothing')
    out.write('[review: the turn changed no files]\n')
    return 'unchanged'
  }
  const root = (await draft.state()).draft?.root ?? 'the root'
  // The diff's lines are the sandbox's bytes: shown with their control characters visible, so a
  // line cannot erase itself from the person's view before the y/N (visible.ts).
  out.write(visibleControls(`[review: the turn's changes to ${root}]\n${changes.diff.trimEnd()}\n`))
  let apply = decision === 'apply'
  if (decision === 'ask' && lines) {
    const answer = await lines.next('apply these changes? [y/N] ')
    apply = /^(y|yes)$/i.test((answer ?? '').trim())
  }
  if (!apply) {
    const why =
      decision === 'no-apply'
        ? '--no-apply'
        : lines
          ? 'not approved at the prompt'
          : 'no terminal to ask (--apply lands them)'
    await draft.abandon(`review: ${why}`)
    out.write(`[review: not applied (${why}); the root is as it was]\n`)
    return 'dropped'
  }
  const r = await draft.apply({ expect: changes.digest ?? undefined })
  out.write(
    visibleControls(
      `[review: applied ${r.landed.length} file(s)${r.landed.length ? `: ${r.landed.join(', ')}` : ''}]\n`,
    ),
  )
  return 'applied'
}

// A review turn that threw (a template or model refused before it ran, a diff that could not be
// applied: draft.conflict) leaves its draft behind. It is dropped, and said so: the next turn
// starts from the root as it is, and its diff shows only its own changes. Whatever the failed
// turn wrote was shown above (or never written); nothing of it lands later unasked.
export async function dropFailedReview(
  engine: Engine,
  sessionId: string,
  out: NodeJS.WritableStream,
): Promise<void> {
  const draft = engine.draft(sessionId)
  try {
    if (!(await draft.state()).draft) return
    await draft.abandon('review: the turn failed')
    out.write(
      '[review: the turn failed; its draft was dropped, the next turn starts from the root as it is]\n',
    )
  } catch (err) {
    out.write(`[review: the failed turn's draft could not be dropped: ${errorMessage(err)}]\n`)
  }
}
