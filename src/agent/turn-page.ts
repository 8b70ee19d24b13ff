import { clipText, fitBytes, jsonValueBytes, SESSION_PAGE_BYTES } from '../persistence/json-bytes.js'
import type { IterationView, TurnView } from './schemas.js'

// A list of turns (GET /v1/sessions/{id}/turns) is bounded in bytes as sent, as the session view
// is (eighteenth outsider pass: six turns of 1 M control characters of model text listed whole
// made a 68 MiB answer, cut after its head, so that session's turns could never be listed).

// Each text of a listed turn (its prompt, answer, error, each iteration's model text and tool
// call arguments) is cut to this many characters, as a block's fields in the session view.
export const TURN_LIST_TEXT_CHARS = 65_536
// What one listed turn's iterations may weigh: its newest iterations are listed while within it
// (a turn may have up to 1000, each with many tool calls); with the clipped prompt, answer and
// error (6 x 65 536 bytes each at worst) one turn stays well within a page, so a page of turns is
// never much past SESSION_PAGE_BYTES.
export const TURN_LIST_ITERATION_BYTES = 2 * 2 ** 20
// A listed turn's children (ids and states, sub_loop turns it started) beyond this many are left
// out of the list's copy: GET the turn for them all.
export const TURN_LIST_CHILDREN = 1000

// A turn as a list shows it: long texts clipped, earlier iterations (and tool calls) past the
// share left out, `truncated` when anything was. GET the turn for all of it.
export function clipTurn(t: TurnView): TurnView {
  let cut = false
  const clip = (s: string): string => {
    const c = clipText(s, TURN_LIST_TEXT_CHARS)
    if (c !== s) cut = true
    return c
  }
  const clipNullable = (s: string | null) => (s === null ? null : clip(s))
  const clippedIterations = function* (): Generator<IterationView> {
    // Newest first, each iteration's tool calls clipped and within the share too.
    for (let i = t.iterations.length - 1; i >= 0; i--) {
      const it = t.iterations[i]!
      const { items: calls, full } = fitBytes(
        it.tool_calls.map((c) => ({ ...c, arguments: clip(c.arguments) })),
        TURN_LIST_ITERATION_BYTES,
      )
      if (full) cut = true
      yield { ...it, text: clipNullable(it.text), tool_calls: calls }
    }
  }
  const iterations = fitBytes(clippedIterations(), TURN_LIST_ITERATION_BYTES)
  // fitBytes keeps the first always: one iteration past the share alone is left out too.
  let kept = iterations.items
  if (kept.length === 1 && iterations.bytes > TURN_LIST_ITERATION_BYTES) kept = []
  if (kept.length < t.iterations.length) cut = true
  const children = t.children.length > TURN_LIST_CHILDREN ? t.children.slice(-TURN_LIST_CHILDREN) : t.children
  if (children !== t.children) cut = true
  const out: TurnView = {
    ...t,
    prompt: clipNullable(t.prompt),
    answer: clipNullable(t.answer),
    error: t.error === null ? null : { code: t.error.code, message: clip(t.error.message) },
    iterations: kept.reverse(),
    children,
  }
  return cut ? { ...out, truncated: true } : out
}

// One page of turns, given newest first (lazily: each is read only when the page has room):
// the turns that fit SESSION_PAGE_BYTES, oldest first, and whether one was left out.
export function pageTurns(newestFirst: Iterable<TurnView>): { turns: TurnView[]; full: boolean } {
  const clipped = (function* () {
    for (const t of newestFirst) yield clipTurn(t)
  })()
  const page = fitBytes(clipped, SESSION_PAGE_BYTES, jsonValueBytes)
  return { turns: page.items.reverse(), full: page.full }
}
