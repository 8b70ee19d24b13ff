// Agent turns: the box that starts one (with the server's configured model, or how to configure
// one), each turn with its iterations as they come in (the model's text, the code it ran, its
// blocks), a cancel button while it runs, and the child turns its blocks started (sub_loop,
// agent()) nested under it. A turn is refetched whole when its events arrive.
import { renderError } from './blocks.js'
import { api, enc, h, problem, shown } from './dom.js'
import { state } from './state.js'

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
    h('a', { href: `#/s/${enc(t.session_id)}` }, shown(t.prompt ?? t.session_id)),
    ' ',
    h('span', { class: 'child-end' }, shown(end)),
    ' ',
    h('small', { class: 'usage' }, usageText(t.usage)),
    t.kids?.length ? h('ul', { class: 'children' }, ...t.kids.map(renderChild)) : null,
  )
}

function codeOf(call) {
  try {
    const args = JSON.parse(call.arguments)
    if (typeof args?.code === 'string') return args.code
  } catch {
    // Not JSON: shown as sent.
  }
  return call.arguments
}

function renderIteration(it) {
  return h(
    'li',
    { class: 'iteration', 'data-iteration': it.id },
    h('small', {}, `Iteration ${it.position}${it.usage ? ` · ${usageText(it.usage)}` : ''}`),
    it.text ? h('pre', { class: 'model-text' }, shown(it.text)) : null,
    ...it.tool_calls.map((c) => h('pre', { class: 'tool-call', 'data-tool': c.name }, shown(codeOf(c)))),
    it.block_ids.length
      ? h(
          'p',
          { class: 'iteration-blocks' },
          'Ran ',
          ...it.block_ids.map((b) =>
            h(
              'a',
              {
                href: '',
                class: 'block-link',
                // Scrolls to the block without taking the session out of the address bar.
                onclick: (e) => {
                  e.preventDefault()
                  document.getElementById(`block-${b}`)?.scrollIntoView({ block: 'center' })
                },
              },
              b,
            ),
          ),
        )
      : null,
  )
}

async function cancelTurn(t, note) {
  problem(note)
  try {
    await api('POST', `/v1/sessions/${enc(t.session_id)}/turns/${enc(t.id)}/cancel`)
    await refreshTurns(t.session_id)
  } catch (e) {
    problem(note, e)
  }
}

function renderTurn(t) {
  const live = t.status === 'running' || t.status === 'queued'
  const note = h('span', { class: 'note' })
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
      live ? h('button', { class: 'cancel-turn', onclick: () => cancelTurn(t, note) }, 'Cancel') : null,
      note,
    ),
    h('pre', { class: 'prompt' }, shown(t.prompt)),
    t.parent
      ? h(
          'p',
          { class: 'parent' },
          'Child of ',
          h('a', { href: `#/s/${enc(t.parent.session_id)}` }, `turn ${t.parent.turn_id}`),
          t.parent.block_id ? ` (block ${t.parent.block_id})` : '',
        )
      : null,
    t.iterations?.length ? h('ol', { class: 'iterations' }, ...t.iterations.map(renderIteration)) : null,
    live ? h('pre', { class: 'streaming', 'data-turn': t.id }, shown(unrecorded(t))) : null,
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
    t.answer ? h('pre', { class: 'answer' }, shown(t.answer)) : null,
    t.error ? renderError(t.error) : null,
  )
}

export async function refreshTurns(id) {
  const { turns } = await api('GET', `/v1/sessions/${enc(id)}/turns`)
  const tree = await Promise.all(
    turns.map(async (t) => ({ ...t, kids: await childTree(t.children ?? [], 0) })),
  )
  const box = document.getElementById('turns')
  if (state.current !== id || !box) return
  box.replaceChildren(...tree.map(renderTurn))
}

// The model's words as they stream, until their iteration lands in the turn's record (then the
// iteration shows them).
export function onDelta(d) {
  if (!d.turn_id || typeof d.text !== 'string') return
  state.streaming ??= new Map()
  const cur = state.streaming.get(d.turn_id)
  const same = cur?.iteration === d.iteration_id
  const text = same ? cur.text + d.text : d.text
  state.streaming.set(d.turn_id, { iteration: d.iteration_id, text })
  const pre = document.querySelector(`pre.streaming[data-turn="${CSS.escape(d.turn_id)}"]`)
  if (!pre) return
  if (same) pre.append(shown(d.text))
  else pre.replaceChildren(shown(text))
}

function unrecorded(t) {
  const cur = state.streaming?.get(t.id)
  if (!cur || t.iterations?.some((it) => it.id === cur.iteration)) return ''
  return cur.text
}

// Which model the server's configuration gives a turn, or why there is none (asked once).
async function agentInfo() {
  state.agent ??= await api('GET', '/v1/agent')
  return state.agent
}

export function turnBox(sessionId) {
  const prompt = h('textarea', {
    id: 'turn-prompt',
    rows: 3,
    'aria-label': 'A task for the agent',
    placeholder: 'A task for the agent; Ctrl-Enter runs a turn',
  })
  const button = h('button', { type: 'submit', id: 'turn-button' }, 'Run turn')
  const model = h('small', { id: 'turn-model' })
  const note = h('span', { class: 'note' })
  const form = h(
    'form',
    { id: 'turn-form', class: 'panel' },
    prompt,
    h('div', { class: 'row' }, button, model, note),
  )
  const submit = async () => {
    if (!prompt.value.trim()) return
    problem(note)
    try {
      const t = await api(
        'POST',
        `/v1/sessions/${enc(sessionId)}/turns`,
        { prompt: prompt.value },
        { prefer: 'respond-async' },
      )
      prompt.value = ''
      note.textContent = `Turn ${t.position} accepted`
      await refreshTurns(sessionId)
    } catch (e) {
      problem(note, e)
    }
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    submit()
  })
  prompt.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault()
      submit()
    }
  })
  agentInfo()
    .then((a) => {
      if (a.model) {
        model.textContent = `model ${a.model}`
        return
      }
      prompt.disabled = true
      button.disabled = true
      form.dataset.unconfigured = ''
      model.replaceChildren(
        h('span', { class: 'configure', role: 'note' }, a.problem?.message ?? 'No model configured.'),
      )
    })
    .catch((e) => problem(note, e))
  return form
}
