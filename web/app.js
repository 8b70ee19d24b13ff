// The session page: the sessions, and one session as a workbench, live over its event stream:
// its blocks as they run and a box to run one by hand, its agent turns and a box to start one,
// the tool calls waiting for approval, and its draft for review. Plain DOM modules, no build
// step. Every write is a same-origin JSON call to the API, behind the API's own guards.
import { refreshApprovals } from './approvals.js'
import { eventStream } from './authed.js'
import { appendOutput, fetchBlock, prependBlocks, runBox, upsertBlock } from './blocks.js'
import { $, api, enc, h, iso, needsToken, setStatus } from './dom.js'
import { refreshDraft } from './drafts.js'
import { initSessionList, loadSessions } from './sessions.js'
import { state } from './state.js'
import { onDelta, refreshTurns, turnBox } from './turns.js'

const later = (p) => p.catch(() => undefined)

// The event types the workbench follows (onEvent).
const FOLLOWED = new Set([
  'block.started',
  'output',
  'block.finished',
  'interrupt',
  'worker.retired',
  'session.closed',
  'draft.created',
  'draft.applied',
  'draft.abandoned',
  'turn.started',
  'model.delta',
  'approval.requested',
  'approval.resolved',
  'turn.completed',
  'turn.failed',
  'turn.cancelled',
])

function onEvent(type, ev) {
  const d = ev.data ?? {}
  const id = state.current
  switch (type) {
    case 'block.started':
      upsertBlock({
        ...(state.blocks.get(d.block_id) ?? {}),
        id: d.block_id,
        position: d.position,
        turn_id: d.turn_id ?? null,
        code: d.code,
        status: 'running',
        stdout: '',
        result: null,
        error: null,
        attachments: [],
        duration_ms: null,
      })
      later(fetchBlock(d.block_id))
      if (d.turn_id) later(refreshTurns(id))
      break
    case 'output':
      if (d.stream === 'stdout') appendOutput(d.block_id, d.data)
      break
    case 'block.finished':
      later(fetchBlock(d.block_id))
      later(loadSessions())
      later(refreshDraft(id))
      later(refreshTurns(id))
      break
    case 'draft.created':
    case 'draft.applied':
    case 'draft.abandoned':
      later(refreshDraft(id))
      break
    case 'model.delta':
      onDelta(d)
      break
    case 'approval.requested':
    case 'approval.resolved':
      later(refreshApprovals(id))
      break
    case 'turn.started':
    case 'turn.completed':
    case 'turn.failed':
    case 'turn.cancelled':
      later(refreshTurns(id))
      later(refreshApprovals(id))
      break
    case 'worker.retired':
      // Only the worker line changes: what the person is typing in the boxes stays.
      later(refreshMeta(id))
      break
    case 'session.closed':
      later(showSession(id, false))
      break
  }
}

// Blocks accepted behind a running one have no event until they start: look for them.
async function pollQueued(id) {
  if (state.current !== id) return
  const s = await api('GET', `/v1/sessions/${enc(id)}?format=display`)
  for (const b of s.blocks) {
    const seen = state.blocks.get(b.id)
    if (!seen || (b.status === 'done' && seen.status !== 'done')) upsertBlock(b)
  }
}

function metaLine(s) {
  const roots = Array.isArray(s.policy?.roots) ? s.policy.roots.join(', ') : ''
  return h(
    'p',
    { class: 'meta', id: 'session-meta', 'data-state': s.state },
    `${s.id} · ${s.state} · worker ${s.worker}`,
    roots ? ' · roots ' : '',
    roots ? iso(roots) : '',
  )
}

async function refreshMeta(id) {
  const s = await api('GET', `/v1/sessions/${enc(id)}`)
  if (state.current === id) document.getElementById('session-meta')?.replaceWith(metaLine(s))
}

// The session view lists its last blocks; the rest come a page at a time, above them.
function earlierButton(id, page) {
  const n = page.blocks_before ?? 0
  if (n === 0 || page.blocks.length === 0) return null
  const before = page.blocks[0].position
  return h(
    'button',
    {
      id: 'earlier-blocks',
      onclick: async (e) => {
        const more = await api('GET', `/v1/sessions/${enc(id)}?format=display&before=${before}`)
        if (state.current !== id) return
        prependBlocks(more.blocks)
        e.target.replaceWith(earlierButton(id, more) ?? '')
      },
    },
    `Show ${n.toLocaleString('en')} earlier blocks`,
  )
}

async function showSession(id, follow = true) {
  if (follow && state.events) {
    state.events.close()
    state.events = null
  }
  if (follow && state.poll) {
    clearInterval(state.poll)
    state.poll = null
  }
  state.current = id
  const s = await api('GET', `/v1/sessions/${enc(id)}?format=display`)
  state.blocks = new Map()
  const open = s.state !== 'closed'
  $('#session').replaceChildren(
    h('h2', {}, iso(s.title || s.id)),
    metaLine(s),
    h('section', { id: 'approvals', 'aria-label': 'Approvals' }),
    h('section', { id: 'draft', 'aria-label': 'Draft' }),
    open ? turnBox(id) : null,
    h('section', { id: 'turns', 'aria-label': 'Agent turns' }),
    earlierButton(id, s),
    h('div', { id: 'blocks' }),
    open ? runBox(id) : null,
  )
  later(refreshDraft(id))
  later(refreshTurns(id))
  later(refreshApprovals(id))
  for (const b of s.blocks) upsertBlock(b)
  for (const a of document.querySelectorAll('nav a')) {
    a.toggleAttribute('aria-current', a.dataset.session === id)
  }
  if (!follow || !open) return
  // Everything after what the detail showed, live; the stream reconnects with Last-Event-ID
  // and stops at the 204 that follows session.closed.
  // Events go by type to onEvent; a gap in the stream (events the server no longer has) is
  // healed by refetching the session.
  const es = eventStream(`/v1/sessions/${enc(id)}/events?after=${s.last_event_id}`, {
    event: (type, data) => {
      if (type === 'gap') later(showSession(id))
      else if (FOLLOWED.has(type)) onEvent(type, JSON.parse(data))
    },
    open: () => setStatus('live'),
    error: (closed) => setStatus(closed ? 'ended' : 'reconnecting…'),
    status: (code) => code === 401 && needsToken(),
  })
  state.events = es
  state.poll = setInterval(() => later(pollQueued(id)), 2000)
}

function route() {
  const m = /^#\/s\/(.+)$/.exec(location.hash)
  if (m) showSession(decodeURIComponent(m[1])).catch((e) => setStatus(e.message))
}

initSessionList()
window.addEventListener('hashchange', route)
loadSessions()
  .then(route)
  .catch((e) => setStatus(e.message))
// New sessions appear without a reload.
setInterval(() => later(loadSessions()), 5000)
