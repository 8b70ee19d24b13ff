// The page's credential and every request that carries it. The token is kept in localStorage,
// which belongs to this scheme+host+port only, and sent as `Authorization: Bearer`; never as a
// cookie, which the browser would also send to every other server on this host (cookies ignore
// ports), where it could be replayed. So the event stream, images and downloads go through fetch
// too (EventSource, <img src> and <a href> cannot set the header).

const KEY = 'vis.token'

// The URL `vis serve` prints carries ?token=: keep it and take it out of the address bar (and so
// out of the history and of anything copied from it).
const here = new URL(location.href)
const given = here.searchParams.get('token')
if (given !== null) {
  localStorage.setItem(KEY, given)
  here.searchParams.delete('token')
  history.replaceState(history.state, '', `${here.pathname}${here.search}${here.hash}`)
}

export function authedFetch(path, init = {}) {
  const token = localStorage.getItem(KEY)
  const headers = new Headers(init.headers)
  if (token) headers.set('authorization', `Bearer ${token}`)
  return fetch(path, { ...init, headers })
}

// An attachment's bytes as an object URL (for an <img>, or a download), or an error.
export async function objectURL(path) {
  const res = await authedFetch(path)
  if (!res.ok) throw new Error(`HTTP ${res.status} for ${path}`)
  return URL.createObjectURL(await res.blob())
}

// Saves an attachment under its name, as the link's download attribute would.
export async function download(path, name) {
  const url = await objectURL(path)
  const a = document.createElement('a')
  a.href = url
  a.download = name
  a.click()
  // The download has taken the bytes once the click's task is done.
  setTimeout(() => URL.revokeObjectURL(url), 0)
}

// Server-sent events over fetch, with what EventSource would do: the `id:` of the last event is
// sent back as Last-Event-ID on reconnecting (after the server's `retry:` delay), and a 204 or any
// other refusal ends the stream. handlers: event(type, data), open(), error(closed), status(code).
export function eventStream(path, handlers) {
  const abort = new AbortController()
  let lastId
  let retry = 1000
  // closed: the stream is over; stopped: the page closed it (and wants no more callbacks).
  let closed = false
  let stopped = false
  const close = () => {
    closed = true
    stopped = true
    abort.abort()
  }
  const dispatch = (block) => {
    let type = 'message'
    const data = []
    for (const line of block.split(/\r\n|\r|\n/)) {
      if (line === '' || line.startsWith(':')) continue
      const at = line.indexOf(':')
      const field = at < 0 ? line : line.slice(0, at)
      const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '')
      if (field === 'event') type = value
      else if (field === 'data') data.push(value)
      else if (field === 'id') lastId = value
      else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value)
    }
    if (data.length) handlers.event(type, data.join('\n'))
  }
  const run = async () => {
    while (!closed) {
      try {
        const headers = { accept: 'text/event-stream' }
        if (lastId !== undefined) headers['last-event-id'] = lastId
        const res = await authedFetch(path, { headers, signal: abort.signal, cache: 'no-store' })
        if (res.status !== 200 || !res.body) {
          if (!stopped) handlers.status?.(res.status)
          closed = true
          break
        }
        if (stopped) break
        handlers.open()
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
        let buf = ''
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          buf += value
          // An event ends at a blank line, whichever line ending the server used.
          for (let m = /\r\n\r\n|\n\n|\r\r/.exec(buf); m; m = /\r\n\r\n|\n\n|\r\r/.exec(buf)) {
            dispatch(buf.slice(0, m.index))
            buf = buf.slice(m.index + m[0].length)
          }
        }
      } catch {
        if (closed) break
      }
      if (closed) break
      handlers.error(false)
      await new Promise((r) => setTimeout(r, retry))
    }
    if (!stopped) handlers.error(true)
  }
  run()
  return { close }
}
