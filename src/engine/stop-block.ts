import type { Engine } from './engine.js'

const RETRY_MS = 50

// Stops one block for good, whoever asked (a cancelled turn, a client that hung up on a
// synchronous request): cancelled while it is queued, interrupted once it runs. An interrupt
// that arrives before the block's Python has started does not land, so it is sent again until
// one lands, the worker is retired, or the block has ended (ended()).
export async function stopBlock(
  engine: Engine,
  sessionId: string,
  blockId: string,
  ended: () => boolean,
): Promise<void> {
  while (!ended()) {
    const r = await engine.interrupt(sessionId, { blockId }).catch(() => undefined)
    if (r?.landed || r?.retired || r?.cancelled) return
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
  }
}
