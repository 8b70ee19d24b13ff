// The child side of bench/native-wire.js. argv[2]:
//   bare  plain Node echo on fd 3 (the Node<->Node floor)
//   wire  Python in wire mode: "exec" runs in C++/Python only; "js-exec" takes the
//         route through this process's JS (socket -> JS -> Python thread -> JS -> socket)
import { Socket } from 'node:net'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { loadPython } from '../../src/native/index.js'

if (process.argv[2] === 'bare') {
  const sock = new Socket({ fd: 3, readable: true, writable: true })
  createInterface({ input: sock }).on('line', (line) => {
    const msg = JSON.parse(line)
    sock.write(`${JSON.stringify({ id: msg.id, ok: true, value: null })}\n`)
  })
} else {
  const rt = await loadPython({ sysPath: [fileURLToPath(new URL('./', import.meta.url))] })
  rt.startWire({
    fd: 3,
    workOps: ['exec'],
    handler: { module: 'wire_bench', fn: 'handle' },
    onMessage(line) {
      const msg = JSON.parse(line)
      if (msg.op === 'js-exec') {
        void rt.exec(msg.code, { ns: 'bench' }).then((o) => {
          rt.wireWrite(JSON.stringify({ id: msg.id, ok: o.ok, value: null }))
        })
      }
    },
    onClose: () => process.exit(0),
  })
}
