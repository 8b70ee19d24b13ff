// The session list: newest first, a page of PAGE at a time ("More" fetches the next one), and a
// filter over titles, ids and states of what has been fetched.
import { $, api, enc, h, iso } from './dom.js'
import { state } from './state.js'

export const PAGE = 200
const list = { pages: 1, sessions: [], more: false }

async function fetchPages() {
  const all = []
  let more = false
  let offset = 0
  for (let i = 0; i < list.pages; i++) {
    // A page holds fewer than PAGE when they would pass 4 MiB of JSON: `next_offset` says where
    // the rest start.
    const page = await api('GET', `/v1/sessions?state=all&limit=${PAGE}&offset=${offset}`)
    all.push(...page.sessions)
    offset = page.next_offset ?? offset + page.sessions.length
    more = page.next_offset !== undefined || page.sessions.length === PAGE
    if (!more) break
  }
  list.sessions = all
  list.more = more
}

function matches(s, q) {
  if (!q) return true
  return [s.title ?? '', s.id, s.state].some((f) => f.toLowerCase().includes(q))
}

export function renderSessions() {
  const q = ($('#session-filter')?.value ?? '').trim().toLowerCase()
  const shownList = list.sessions.filter((s) => matches(s, q))
  $('#sessions').replaceChildren(
    ...shownList.map((s) =>
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
          iso(s.title || s.id, { class: 'title' }),
          h('small', {}, `${s.state} · ${s.worker}${s.busy ? ' · busy' : ''}`),
        ),
      ),
    ),
  )
  $('#sessions-count').textContent =
    `${shownList.length} of ${list.sessions.length}${list.more ? '+' : ''} session${list.sessions.length === 1 ? '' : 's'}`
  $('#sessions-more').hidden = !list.more
}

export async function loadSessions() {
  await fetchPages()
  renderSessions()
}

export function initSessionList() {
  $('#session-filter').addEventListener('input', renderSessions)
  $('#sessions-more').addEventListener('click', () => {
    list.pages += 1
    loadSessions().catch(() => undefined)
  })
}
