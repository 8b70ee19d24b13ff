// A session's draft, for review: each changed file with what happened to it and its part of the
// diff (binaries named, not shown), then apply or abandon. Apply sends the digest of the diff on
// screen as `expect`, so what lands is what the person saw; a draft that moved since is refused
// (draft.changed) and shown again. Conflicts offer the two ways through: keep the real files
// (theirs) or let the draft win (ours).
import { api, enc, h, iso, problem, shown } from './dom.js'
import { state } from './state.js'

// The unified diff is one "diff --git" section per change, in the order of `changes`. Lines end
// at "\n" only, as the server writes them: a regex `^` with the m flag would also start a line
// after "\r", U+2028 or U+2029, which a drafted file may hold, and cut a fake section there.
function sections(diff) {
  const parts = []
  let cur = null
  for (const line of diff.split('\n')) {
    if (line.startsWith('diff --git ')) {
      if (cur) parts.push(cur.join('\n'))
      cur = [line]
    } else if (cur) cur.push(line)
  }
  if (cur) parts.push(cur.join('\n'))
  return parts
}

function renderFile(change, part) {
  // A header line of its own: split at "\n" only (not the m flag's "\r" or U+2028), so a text
  // file's line can never make its own section read as binary.
  const binary = (part ?? '').split('\n').some((l) => /^Binary files .* differ/.test(l))
  return h(
    'details',
    { class: 'file', open: true, 'data-path': change.path, 'data-change': change.status },
    h(
      'summary',
      {},
      h('span', { class: `badge ${change.status}` }, change.status),
      ' ',
      iso(change.path, { class: 'path' }),
      change.from ? h('small', {}, ' from ', iso(change.from)) : null,
      binary ? h('small', { class: 'binary' }, ' binary') : null,
    ),
    h('pre', { class: 'diff' }, shown(part ?? '')),
  )
}

// What the last apply said (the draft moved: why it is shown again; a conflict: the two ways
// through), kept across re-renders of the draft until the next action.
let notice = null

async function apply(id, digest, how, note) {
  notice = null
  problem(note)
  try {
    await api('POST', `/v1/sessions/${enc(id)}/draft/apply`, { expect: digest, ...how })
    await refreshDraft(id)
  } catch (e) {
    if (e.code === 'draft.conflict') return showConflict(id, digest, e, note)
    problem(note, e)
    // The draft moved since the diff on screen: show the new one, saying why.
    if (e.code === 'draft.changed') {
      notice = { id, text: e.message }
      await refreshDraft(id)
    }
  }
}

function showConflict(id, digest, e, note) {
  notice = { id, conflict: { digest, files: e.details?.conflicts ?? [] } }
  conflictBox(id, notice.conflict, note)
}

function conflictBox(id, { digest, files }, note) {
  note.replaceChildren(
    h(
      'div',
      { class: 'conflict', role: 'alert' },
      h('p', {}, 'These files changed in the real directory since the draft began:'),
      h('ul', {}, ...files.map((f) => h('li', {}, iso(f)))),
      h(
        'button',
        { class: 'apply-theirs', onclick: () => apply(id, digest, { theirs: true }, note) },
        'Apply, keep their versions',
      ),
      ' ',
      h(
        'button',
        { class: 'apply-ours', onclick: () => apply(id, digest, { ours: true }, note) },
        'Apply, draft wins',
      ),
    ),
  )
}

async function abandon(id, note) {
  notice = null
  problem(note)
  try {
    await api('POST', `/v1/sessions/${enc(id)}/draft/abandon`, { why: 'abandoned from the session page' })
    await refreshDraft(id)
  } catch (e) {
    problem(note, e)
  }
}

// Refetched whole on every change: the diff route is the one source of truth.
export async function refreshDraft(id) {
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
  const parts = sections(diff?.diff ?? '')
  const keep = notice?.id === id ? notice.text : null
  const note = h(
    'div',
    { class: 'draft-note' },
    keep ? h('span', { class: 'problem', role: 'alert' }, shown(keep)) : '',
  )
  // A conflict's choice stays offered while the diff it was about is the one on screen.
  if (notice?.id === id && notice.conflict?.digest === diff?.digest) conflictBox(id, notice.conflict, note)
  const changes = diff?.changes ?? []
  box.dataset.digest = diff?.digest ?? ''
  box.replaceChildren(
    h(
      'p',
      { class: 'draft-state' },
      'Draft ',
      h('strong', { class: 'draft-label' }, shown(st.draft.label)),
      ` · since ${st.draft.base_at}${files}`,
    ),
    !changes.length
      ? h('pre', { class: 'diff' }, '(no changes yet)')
      : parts.length === changes.length
        ? h('div', { class: 'files' }, ...changes.map((c, i) => renderFile(c, parts[i])))
        : // Not one section per change: shown whole, never a file paired with another's section.
          h(
            'div',
            { class: 'files' },
            h(
              'p',
              { class: 'problem' },
              'The diff does not split into one section per file: it is shown whole.',
            ),
            h('pre', { class: 'diff' }, shown(diff?.diff ?? '')),
          ),
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        { class: 'apply', disabled: !diff?.digest, onclick: () => apply(id, diff.digest, {}, note) },
        'Apply to the real directory',
      ),
      h('button', { class: 'abandon', onclick: () => abandon(id, note) }, 'Abandon'),
    ),
    note,
  )
}
