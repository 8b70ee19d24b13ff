// The session page: the sessions, and one session's blocks as they run, live over its event
// stream. Plain DOM, no build step. Text goes in as text (never as HTML): block output is data.

const $ = (sel) => document.querySelector(sel)

// h('div', {class: 'x'}, 'text', child) — attributes, then text or element children.
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v)
    else el.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children.flat()) {
    if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c))
  }
  return el
}

const state = { current: null, events: null, blocks: new Map(), poll: null }
const enc = encodeURIComponent

function setStatus(text) {
  $('#status').textContent = text
}

// Same-origin calls: the token rides in the cookie set by visiting the printed URL.
async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (res.status === 401) {
    $('#auth').hidden = false
    throw new Error('unauthorized')
  }
  const data = res.status === 204 ? null : await res.json()
  if (!res.ok) throw new Error(data?.error?.message ?? `HTTP ${res.status}`)
  return data
}

async function loadSessions() {
  const { sessions } = await api('GET', '/v1/sessions?state=all&limit=200')
  const list = $('#sessions')
  list.replaceChildren(
    ...sessions.map((s) =>
      h(
        'li',
        {},
        h(
          'a',
          {
            href: `#/s/${enc(s.id)}`,
            'aria-current': s.id === state.current ? 'page' : undefined,
            'data-session': s.id,
          },
          s.title || s.id,
          h('small', {}, `${s.state} · ${s.worker}${s.busy ? ' · busy' : ''}`),
        ),
      ),
    ),
  )
}

function blockStatus(b) {
  if (b.status !== 'done') return b.status
  return b.error ? 'failed' : 'done'
}

function renderError(err) {
  const [first, ...rest] = String(err.message ?? '')
    .split('\n')
    .filter((l) => !l.startsWith('hint: '))
  return h(
    'div',
    { class: 'error' },
    h('pre', { class: 'message' }, [first, ...rest].join('\n')),
    err.excerpt ? h('pre', { class: 'excerpt' }, err.excerpt) : null,
    Array.isArray(err.hints) && err.hints.length > 0
      ? h('ul', { class: 'hints' }, ...err.hints.map((x) => h('li', {}, String(x))))
      : null,
  )
}

// The raster types the server serves inline (src/http/attachment-response.ts); anything else
// it serves as a download, so it is a link here.
const INLINE_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])

function renderAttachments(list) {
  if (!list?.length) return null
  return h(
    'div',
    { class: 'attachments' },
    ...list.map((a) =>
      INLINE_IMAGES.has(a.media_type)
        ? h('img', { src: a.url, alt: a.name ?? a.id, 'data-attachment': a.id })
        : h('a', { href: a.url, download: a.name ?? a.id, 'data-attachment': a.id }, a.name ?? a.id),
    ),
  )
}

function renderBlock(b) {
  const status = blockStatus(b)
  // The result, or the value a block that also printed ended in (shown after its output, as a
  // notebook shows a cell's).
  const shown = b.result ?? b.value
  const action =
    b.status === 'running'
      ? h('button', { class: 'interrupt', onclick: () => interrupt(b.id) }, 'Interrupt')
      : b.status === 'queued'
        ? h('button', { class: 'cancel', onclick: () => cancel(b.id) }, 'Cancel')
        : null
  return h(
    'article',
    { class: 'block', id: `block-${b.id}`, 'data-block': b.id, 'data-status': status },
    h(
      'div',
      { class: 'head' },
      h('strong', {}, `#${b.position}`),
      h('span', { class: `badge ${status}` }, status),
      h('span', { class: 'grow' }),
      b.duration_ms !== null && b.duration_ms !== undefined ? h('small', {}, `${b.duration_ms} ms`) : null,
      action,
    ),
    h('pre', { class: 'code' }, b.code_display ?? b.code),
    h('pre', { class: 'stdout' }, b.stdout ?? ''),
    shown !== null && shown !== undefined
      ? h('div', { class: 'result' }, `→ ${JSON.stringify(shown)}`)
      : null,
    b.error ? renderError(b.error) : null,
    renderAttachments(b.attachments),
  )
}

function upsertBlock(b) {
  // A running block's stored stdout is written when it finishes; until then what streamed in counts.
  const seen = state.blocks.get(b.id)
  if (b.status !== 'done' && seen && seen.stdout.length > (b.stdout ?? '').length)
    b = { ...b, stdout: seen.stdout }
  state.blocks.set(b.id, b)
  const el = renderBlock(b)
  const old = document.getElementById(`block-${b.id}`)
  if (old) old.replaceWith(el)
  else $('#blocks').append(el)
}

async function fetchBlock(id) {
  const b = await api('GET', `/v1/sessions/${enc(state.current)}/blocks/${enc(id)}?format=display`)
  // Output that streamed in while the request was out is in the fetched block already.
  upsertBlock(b)
}

async function interrupt(blockId) {
  await api('POST', `/v1/sessions/${enc(state.current)}/interrupt`, { block_id: blockId })
}

async function cancel(blockId) {
  upsertBlock(await api('POST', `/v1/sessions/${enc(state.current)}/blocks/${enc(blockId)}/cancel`))
}

function onEvent(type, ev) {
  const d = ev.data ?? {}
  switch (type) {
    case 'block.started':
      upsertBlock({
        ...(state.blocks.get(d.block_id) ?? {}),
        id: d.block_id,
        position: d.position,
        code: d.code,
        status: 'running',
        stdout: '',
        result: null,
        error: null,
        attachments: [],
        duration_ms: null,
      })
      fetchBlock(d.block_id).catch(() => undefined)
      break
    case 'output': {
      const b = state.blocks.get(d.block_id)
      if (!b || d.stream !== 'stdout') break
      b.stdout += d.data
      document.querySelector(`#block-${CSS.escape(d.block_id)} pre.stdout`)?.append(d.data)
      break
    }
    case 'block.finished':
      fetchBlock(d.block_id).catch(() => undefined)
      loadSessions().catch(() => undefined)
      refreshDraft(state.current).catch(() => undefined)
      break
    case 'draft.created':
    case 'draft.applied':
    case 'draft.abandoned':
      refreshDraft(state.current).catch(() => undefined)
      break
    case 'turn.started':
    case 'turn.completed':
    case 'turn.failed':
    case 'turn.cancelled':
      refreshTurns(state.current).catch(() => undefined)
      break
    case 'session.closed':
    case 'worker.retired':
      showSession(state.current, false).catch(() => undefined)
      break
  }
}

// Whether the session works on its trunk or in a draft; in a draft, its unified diff against the
// real root. Refetched whole on every change: the diff route is the one source of truth.
async function refreshDraft(id) {
  const st = await api('GET', `/v1/sessions/${enc(id)}/draft`)
  const diff = st.mode === 'draft' ? await api('GET', `/v1/sessions/${enc(id)}/draft/diff`) : null
  const box = document.getElementById('draft')
  if (state.current !== id || !box) return
  box.dataset.mode = st.mode
  if (st.mode !== 'draft' || !st.draft) {
    box.replaceChildren(h('p', { class: 'draft-state' }, 'On the trunk'))
    return
  }
  const n = st.draft.files_changed
  const files = n === null || n === undefined ? '' : ` · ${n} file${n === 1 ? '' : 's'} changed`
  box.replaceChildren(
    h(
      'p',
      { class: 'draft-state' },
      'Draft ',
      h('strong', { class: 'draft-label' }, st.draft.label),
      ` · since ${st.draft.base_at}${files}`,
    ),
    h('pre', { class: 'diff' }, diff?.diff || '(no changes yet)'),
  )
}

// The session's agent turns as a tree: each turn's task, answer and usage, the child turns its
// blocks started (sub_loop, agent()) nested under it with their own, links to their sessions,
// and for a child session the turn it came from. Refetched whole when a turn starts or ends.
const TREE_DEPTH = 8

function usageText(u) {
  if (!u) return ''
  const cost = u.cost_usd === null || u.cost_usd === undefined ? '' : ` · $${u.cost_usd.toFixed(4)}`
  return `${u.input} in / ${u.output} out tokens${cost}`
}

async function childTree(refs, depth) {
  if (depth >= TREE_DEPTH) return []
  return Promise.all(
    refs.map(async (c) => {
      const t = await api('GET', `/v1/sessions/${enc(c.session_id)}/turns/${enc(c.turn_id)}`).catch(() => ({
        ...c,
        id: c.turn_id,
        children: [],
      }))
      return { ...t, kids: await childTree(t.children ?? [], depth + 1) }
    }),
  )
}

function renderChild(t) {
  const end = t.answer ? `→ ${t.answer}` : t.error ? `✗ ${t.error.code}` : ''
  return h(
    'li',
    { class: 'child-turn', 'data-turn': t.id, 'data-session': t.session_id, 'data-status': t.status },
    h('span', { class: `badge ${t.status}` }, t.status),
    ' ',
    h('a', { href: `#/s/${enc(t.session_id)}` }, t.prompt ?? t.session_id),
    ' ',
    h('span', { class: 'child-end' }, end),
    ' ',
    h('small', { class: 'usage' }, usageText(t.usage)),
    t.kids?.length ? h('ul', { class: 'children' }, ...t.kids.map(renderChild)) : null,
  )
}

function renderTurn(t) {
  return h(
    'article',
    { class: 'turn', 'data-turn': t.id, 'data-status': t.status },
    h(
      'div',
      { class: 'head' },
      h('strong', {}, `Turn ${t.position}`),
      h('span', { class: `badge ${t.status}` }, t.status),
      h('small', {}, t.model ?? ''),
      h('span', { class: 'grow' }),
      h('small', { class: 'usage' }, usageText(t.usage)),
    ),
    h('pre', { class: 'prompt' }, t.prompt),
    t.parent
      ? h(
          'p',
          { class: 'parent' },
          'Child of ',
          h('a', { href: `#/s/${enc(t.parent.session_id)}` }, `turn ${t.parent.turn_id}`),
          t.parent.block_id ? ` (block ${t.parent.block_id})` : '',
        )
      : null,
    t.kids.length
      ? h(
          'div',
          { class: 'tree' },
          h(
            'small',
            { class: 'tree-usage' },
            `With ${t.kids.length} child turn(s): ${usageText(t.tree_usage)}`,
          ),
          h('ul', { class: 'children' }, ...t.kids.map(renderChild)),
        )
      : null,
    t.answer ? h('pre', { class: 'answer' }, t.answer) : null,
    t.error ? renderError(t.error) : null,
  )
}

async function refreshTurns(id) {
  const { turns } = await api('GET', `/v1/sessions/${enc(id)}/turns`)
  const tree = await Promise.all(
    turns.map(async (t) => ({ ...t, kids: await childTree(t.children ?? [], 0) })),
  )
  const box = document.getElementById('turns')
  if (state.current !== id || !box) return
  box.replaceChildren(...tree.map(renderTurn))
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
  const roots = Array.isArray(s.policy?.roots) ? s.policy.roots.join(', ') : ''
  $('#session').replaceChildren(
    h('h2', {}, s.title || s.id),
    h(
      'p',
      { class: 'meta', id: 'session-meta', 'data-state': s.state },
      `${s.id} · ${s.state} · worker ${s.worker}${roots ? ` · roots ${roots}` : ''}`,
    ),
    h('section', { id: 'draft', 'aria-label': 'Draft' }),
    h('section', { id: 'turns', 'aria-label': 'Agent turns' }),
    h('div', { id: 'blocks' }),
  )
  refreshDraft(id).catch(() => undefined)
  refreshTurns(id).catch(() => undefined)
  for (const b of s.blocks) upsertBlock(b)
  for (const a of document.querySelectorAll('nav a')) {
    a.toggleAttribute('aria-current', a.dataset.session === id)
  }
  if (!follow || s.state === 'closed') return
  // Everything after what the detail showed, live; the browser reconnects with Last-Event-ID
  // by itself and stops at the 204 that follows session.closed.
  const es = new EventSource(`/v1/sessions/${enc(id)}/events?after=${s.last_event_id}`)
  state.events = es
  state.poll = setInterval(() => pollQueued(id).catch(() => undefined), 2000)
  for (const type of [
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
    'turn.completed',
    'turn.failed',
    'turn.cancelled',
  ]) {
    es.addEventListener(type, (e) => onEvent(type, JSON.parse(e.data)))
  }
  es.addEventListener('gap', () => showSession(id).catch(() => undefined))
  es.addEventListener('open', () => setStatus('live'))
  es.addEventListener('error', () =>
    setStatus(es.readyState === EventSource.CLOSED ? 'ended' : 'reconnecting…'),
  )
}

function route() {
  const m = /^#\/s\/(.+)$/.exec(location.hash)
  if (m) showSession(decodeURIComponent(m[1])).catch((e) => setStatus(e.message))
}

window.addEventListener('hashchange', route)
loadSessions()
  .then(route)
  .catch((e) => setStatus(e.message))
// New sessions appear without a reload.
setInterval(() => loadSessions().catch(() => undefined), 5000)
