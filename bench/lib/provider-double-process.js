// The provider double for the agent loop's bench, in its own process or in this one.
//
// In its own process by default: process.cpuUsage() counts every thread of this process, so an
// in-process double put its own work (parsing each request, which grows with the turn's history,
// and streaming the reply) into the loop's CPU, though a hosted model does that on its servers.
// The loop and the SDK-direct baseline talk to it over loopback either way; only where its CPU
// is spent moves.
import { fork } from 'node:child_process'

// The middle chat request recorded since the last script (a turn's typical request: its
// messages are the session's history so far plus half the turn), for the SDK baseline to send.
export const middleRequest = (requests) => {
  const chat = requests.filter((r) => r.dialect === 'chat')
  if (chat.length === 0) return undefined
  const { messages, tools } = chat[chat.length >> 1].body
  return { messages, tools }
}

export async function startDoubleInProcess(ProviderDouble) {
  const double = await new ProviderDouble().start()
  return {
    openaiURL: double.openaiURL,
    async script(replies, always) {
      double.script(replies, always)
      double.requests.length = 0
    },
    middle: async () => middleRequest(double.requests),
    close: () => double.close(),
  }
}

export async function startDoubleProcess() {
  const child = fork(new URL('./provider-double-child.js', import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const waiting = new Map()
  let next = 0
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const port = await new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) =>
      reject(new Error(`the provider double's process exited (${code}) before it listened`)),
    )
    child.on('message', (m) => {
      if (m.port !== undefined) resolve(m.port)
      else waiting.get(m.id)?.(m)
    })
  })
  const ask = (message) => {
    const id = next++
    return new Promise((resolve) => {
      waiting.set(id, (m) => {
        waiting.delete(id)
        resolve(m)
      })
      child.send({ id, ...message })
    })
  }
  return {
    openaiURL: `http://127.0.0.1:${port}/v1`,
    // Resolves once the double holds the script, so the next request meets it.
    script: async (replies, always) => {
      await ask({ replies, always })
    },
    middle: async () => (await ask({ op: 'middle' })).body,
    async close() {
      child.disconnect()
      await exited
    },
  }
}
