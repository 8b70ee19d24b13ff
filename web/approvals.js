// Tool calls waiting for a person: what the call is (tool, whole arguments, why it needs asking)
// and approve or deny, with a note the guest sees on a denial. Refetched on approval events.
import { api, enc, h, problem, shown } from './dom.js'
import { state } from './state.js'

function renderApproval(sessionId, a) {
  const note = h('input', {
    type: 'text',
    class: 'approval-note',
    'aria-label': 'Note',
    placeholder: 'Note (optional)',
  })
  const out = h('span', { class: 'note' })
  const decide = async (decision) => {
    problem(out)
    try {
      const body = { decision, by: 'page' }
      if (note.value.trim()) body.note = note.value
      await api('POST', `/v1/sessions/${enc(sessionId)}/approvals/${enc(a.id)}`, body)
      await refreshApprovals(sessionId)
    } catch (e) {
      problem(out, e)
    }
  }
  return h(
    'article',
    { class: 'approval', 'data-approval': a.id },
    h(
      'div',
      { class: 'head' },
      h('strong', {}, 'Approval needed: '),
      h('code', { class: 'tool' }, shown(a.tool)),
    ),
    h('p', { class: 'reason' }, shown(a.reason)),
    h('pre', { class: 'args' }, shown(JSON.stringify(a.args, null, 2))),
    h(
      'div',
      { class: 'row' },
      note,
      h('button', { class: 'approve', onclick: () => decide('approve') }, 'Approve'),
      h('button', { class: 'deny', onclick: () => decide('deny') }, 'Deny'),
      out,
    ),
  )
}

export async function refreshApprovals(id) {
  const { approvals } = await api('GET', `/v1/sessions/${enc(id)}/approvals?status=pending`)
  const box = document.getElementById('approvals')
  if (state.current !== id || !box) return
  box.replaceChildren(...approvals.map((a) => renderApproval(id, a)))
}
