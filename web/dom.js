import { authedFetch } from './authed.js'

// Small DOM and API helpers shared by the page's modules. Text from the server goes in as text
// (never as HTML): block output, titles and labels are data, some of it written in the sandbox.

export const $ = (sel) => document.querySelector(sel)
export const enc = encodeURIComponent

// h('div', {class: 'x'}, 'text', child) — attributes, then text or element children.
export function h(tag, attrs = {}, ...children) {
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

// Bidi controls (embeddings, overrides, isolates, marks) reorder what follows them: a title
// "report\u202Efdp.exe" would read as "reportexe.pdf". Text from sessions shows them as visible
// marks instead, and sits in an isolate (<bdi>) so it cannot reorder the page around it.
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

export function shown(text) {
  const s = String(text ?? '')
  if (!BIDI.test(s)) return s
  BIDI.lastIndex = 0
  const frag = document.createDocumentFragment()
  let at = 0
  for (const m of s.matchAll(BIDI)) {
    frag.append(s.slice(at, m.index))
    const code = m[0].codePointAt(0).toString(16).toUpperCase().padStart(4, '0')
    frag.append(h('span', { class: 'ctl', title: `U+${code}` }, `<U+${code}>`))
    at = m.index + m[0].length
  }
  frag.append(s.slice(at))
  return frag
}

// A title, label or name from a session: isolated and with its controls visible.
export const iso = (text, attrs = {}) => h('bdi', attrs, shown(text))

export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`)
    this.status = status
    this.code = error?.code
    this.details = error?.details
  }
}

// Same-origin calls with the token as a bearer (authed.js); writes are JSON, as the API's
// content-type guard requires.
export async function api(method, path, body, headers = {}) {
  const res = await authedFetch(path, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (res.status === 401) {
    needsToken()
    throw new ApiError(401, { code: 'http.unauthorized', message: 'unauthorized' })
  }
  const data = res.status === 204 ? null : await res.json()
  if (!res.ok) throw new ApiError(res.status, data?.error)
  return data
}

// A 401: the page has no token, or one from an earlier start of the server.
export function needsToken() {
  $('#auth').hidden = false
}

export function setStatus(text) {
  $('#status').textContent = text
}

// A failed action's message where the person clicked, not only in the console.
export function problem(box, e) {
  box.replaceChildren(e ? h('span', { class: 'problem', role: 'alert' }, shown(e.message)) : '')
}
