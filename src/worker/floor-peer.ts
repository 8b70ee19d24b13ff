// The benchmark's baseline: a bare Node child answering JSON-line requests over the same
// kind of inherited socketpair the worker uses, with no validation and no Python. What
// the worker costs beyond this is the price of the interpreter and the runtime.
import { Socket } from 'node:net'

const sock = new Socket({ fd: 3, readable: true, writable: true })
sock.setEncoding('utf8')
let buf = ''
sock.on('data', (chunk: string) => {
  buf += chunk
  let nl = buf.indexOf('\n')
  while (nl >= 0) {
    const msg = JSON.parse(buf.slice(0, nl)) as { id: number; value?: unknown }
    buf = buf.slice(nl + 1)
    sock.write(JSON.stringify({ id: msg.id, ok: true, value: msg.value ?? null }) + '\n')
    nl = buf.indexOf('\n')
  }
})
sock.on('close', () => process.exit(0))
