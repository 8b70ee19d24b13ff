// One session's blocks as they run, and the editor box that runs one by hand (Ctrl-Enter), as a
// notebook's cell does.
import { download, objectURL } from './authed.js'
import { $, api, enc, h, problem, shown } from './dom.js'
import { state } from './state.js'

// Output past either bound is shown clipped (a 1 MiB print must not become one endless box),
// with a button that shows it all.
const CLIP_CHARS = 6000
const CLIP_LINES = 40

function lineCount(s) {
  let n = 1
  for (let i = s.indexOf('\n'); i >= 0 && n <= CLIP_LINES; i = s.indexOf('\n', i + 1)) n++
  return n
}
const longOutput = (s) => s.length > CLIP_CHARS || lineCount(s) > CLIP_LINES

export function blockStatus(b) {
  if (b.status !== 'done') return b.status
  if (!b.error) return 'done'
  // Stopped before it ran, by a person or the session closing: not a failure of its code.
  return b.error.code === 'block.cancelled' ? 'cancelled' : 'failed'
}

// The message, excerpt and hints; the whole chain (causes, every frame), when the guest sent
// one, folded under them.
export function renderError(err) {
  const lines = String(err.message ?? '')
    .split('\n')
    .filter((l) => !l.startsWith('hint: '))
  return h(
    'div',
    { class: 'error' },
    h('pre', { class: 'message' }, shown(lines.join('\n'))),
    err.excerpt ? h('pre', { class: 'excerpt' }, shown(err.excerpt)) : null,
    Array.isArray(err.hints) && err.hints.length > 0
      ? h('ul', { class: 'hints' }, ...err.hints.map((x) => h('li', {}, shown(x))))
      : null,
    typeof err.traceback === 'string' && err.traceback
      ? h(
          'details',
          { class: 'chain' },
          h('summary', {}, 'Traceback (the whole chain)'),
          h('pre', {}, shown(err.traceback)),
        )
      : null,
  )
}

// The raster types the server serves inline (src/http/attachment-response.ts); anything else
// it serves as a download, so it is a link here.
const INLINE_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])

// Its bytes come through a fetch with the token (an <img src> cannot send it), shown from memory.
function attachedImage(a) {
  const img = h('img', { alt: a.name ?? a.id, 'data-attachment': a.id })
  objectURL(a.url)
    .then((url) => {
      img.addEventListener('load', () => URL.revokeObjectURL(url), { once: true })
      img.src = url
    })
    .catch((err) => img.setAttribute('title', err.message))
  return img
}

function renderAttachments(list) {
  if (!list?.length) return null
  return h(
    'div',
    { class: 'attachments' },
    ...list.map((a) =>
      INLINE_IMAGES.has(a.media_type)
        ? attachedImage(a)
        : h(
            'a',
            {
              href: a.url,
              download: a.name ?? a.id,
              'data-attachment': a.id,
              // The URL alone would be refused (no token in it): fetched with the token instead.
              onclick: (e) => {
                e.preventDefault()
                download(a.url, a.name ?? a.id).catch((err) => console.error(err))
              },
            },
            shown(a.name ?? a.id),
          ),
    ),
  )
}

// Clips the output box once it is long, unless the person asked for all of it.
function fitOutput(article, text) {
  const pre = article.querySelector('pre.stdout')
  const open = state.unclipped.has(article.dataset.block)
  const clip = !open && longOutput(text)
  pre.classList.toggle('clipped', clip)
  const btn = article.querySelector('button.show-all')
  btn.hidden = !clip
  btn.textContent = `Show all (${text.length.toLocaleString('en')} characters)`
}

function renderBlock(b) {
  const status = blockStatus(b)
  // The result, or the value a block that also printed ended in (shown after its output, as a
  // notebook shows a cell's).
  const value = b.result ?? b.value
  const action =
    b.status === 'running'
      ? h('button', { class: 'interrupt', onclick: () => interrupt(b.id) }, 'Interrupt')
      : b.status === 'queued'
        ? h('button', { class: 'cancel', onclick: () => cancel(b.id) }, 'Cancel')
        : null
  const article = h(
    'article',
    { class: 'block', id: `block-${b.id}`, 'data-block': b.id, 'data-status': status },
    h(
      'div',
      { class: 'head' },
      h('strong', {}, `#${b.position}`),
      h('span', { class: `badge ${status}` }, status),
      b.turn_id ? h('small', { class: 'by-turn' }, 'by the agent') : null,
      h('span', { class: 'grow' }),
      b.duration_ms !== null && b.duration_ms !== undefined ? h('small', {}, `${b.duration_ms} ms`) : null,
      action,
    ),
    h('pre', { class: 'code' }, shown(b.code_display ?? b.code)),
    h('pre', { class: 'stdout' }, shown(b.stdout ?? '')),
    h(
      'button',
      {
        class: 'show-all',
        hidden: true,
        onclick: () => {
          state.unclipped.add(b.id)
          fitOutput(article, state.blocks.get(b.id)?.stdout ?? '')
        },
      },
      'Show all',
    ),
    value !== null && value !== undefined
      ? h('div', { class: 'result' }, shown(`→ ${JSON.stringify(value)}`))
      : null,
    b.error ? renderError(b.error) : null,
    // The session view cuts a long block (its first 65 536 characters, no long value): the whole
    // one is a request away.
    b.truncated
      ? h('button', { class: 'load-whole', onclick: () => fetchBlock(b.id) }, 'Load the whole block')
      : null,
    renderAttachments(b.attachments),
  )
  fitOutput(article, b.stdout ?? '')
  return article
}

export function upsertBlock(b) {
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

// Earlier blocks (the session view lists the last ones), oldest first, above those shown.
export function prependBlocks(blocks) {
  const box = $('#blocks')
  for (const b of [...blocks].reverse()) {
    if (state.blocks.has(b.id)) continue
    state.blocks.set(b.id, b)
    box.prepend(renderBlock(b))
  }
}

export function appendOutput(blockId, data) {
  const b = state.blocks.get(blockId)
  if (!b) return
  b.stdout += data
  const article = document.getElementById(`block-${blockId}`)
  if (!article) return
  article.querySelector('pre.stdout').append(shown(data))
  fitOutput(article, b.stdout)
}

export async function fetchBlock(id) {
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

// The editor box: the block is accepted at once (respond-async) and then shows up like any
// other, over the session's events.
export function runBox(sessionId) {
  const input = h('textarea', {
    id: 'code-input',
    rows: 4,
    spellcheck: 'false',
    'aria-label': 'Python to run in this session',
    placeholder: 'Python to run here; Ctrl-Enter runs it',
  })
  const note = h('span', { class: 'note' })
  const submit = async () => {
    const code = input.value
    if (!code.trim()) return
    problem(note)
    try {
      const b = await api(
        'POST',
        `/v1/sessions/${enc(sessionId)}/blocks`,
        { code },
        { prefer: 'respond-async' },
      )
      input.value = ''
      if (!state.blocks.has(b.id)) upsertBlock(b)
    } catch (e) {
      problem(note, e)
    }
  }
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault()
      submit()
    }
  })
  return h(
    'form',
    {
      id: 'run-form',
      class: 'panel',
      onsubmit: (e) => {
        e.preventDefault()
        submit()
      },
    },
    input,
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'submit', id: 'run-button' }, 'Run'),
      h('small', {}, 'Ctrl-Enter'),
      note,
    ),
  )
}
