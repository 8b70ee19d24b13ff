import { createRequire } from 'node:module'

// node:net, loaded on first use. The session worker imports the egress modules for its policy
// schemas, and with the network off never calls into node:net; loading it (and the stream
// machinery behind it) at import cost ~15-20 ms of every worker's start, jitless.
const load = createRequire(import.meta.url)
let net: typeof import('node:net') | undefined

export function nodeNet(): typeof import('node:net') {
  net ??= load('node:net') as typeof import('node:net')
  return net
}
