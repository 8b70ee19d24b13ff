// The egress forwarder in a process of its own, as in the worker (VIS_EGRESS_SOCKET, and
// VIS_EGRESS_PORT=0 for any free port). Prints the port it listens on, then serves until killed.
import { startEgressForwarderFromEnv } from '../../src/confinement/egress/forwarder.js'

const forwarder = await startEgressForwarderFromEnv()
if (!forwarder) throw new Error('VIS_EGRESS_SOCKET is not set')
process.stdout.write(`${forwarder.port}\n`)
