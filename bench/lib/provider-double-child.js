// The provider double (test/agent/double.ts) in a process of its own, driven over IPC by
// provider-double-process.js. Run under tsx (the double is test TypeScript).
import { ProviderDouble } from '../../test/agent/double.ts'
import { middleRequest } from './provider-double-process.js'

const double = await new ProviderDouble().start()
process.on('message', (m) => {
  if (m.op === 'middle') return process.send({ id: m.id, body: middleRequest(double.requests) })
  double.script(m.replies, m.always)
  // Only the requests since this script are asked for (middle); keeping every one would grow the heap.
  double.requests.length = 0
  process.send({ id: m.id })
})
process.on('disconnect', () => {
  double.close().then(() => process.exit(0))
})
process.send({ port: double.port })
