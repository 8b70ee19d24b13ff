// The index's parser thread (parse-pool.ts starts it): tree-sitter parses here, so a large or
// slow file never holds up the host's event loop, which serves every session.
import { parentPort } from 'node:worker_threads'
import { isVisError } from '../../util/errors.js'
import { LANGUAGES } from './languages.js'
import { outline, ParseTimeout } from './parse.js'
import type { ParseReply, ParseRequest } from './parse-pool.js'

const port = parentPort!

port.on('message', async (req: ParseRequest) => {
  const reply = (r: Omit<ParseReply, 'id'>) => port.postMessage({ id: req.id, ...r })
  try {
    const lang = LANGUAGES.find((l) => l.id === req.lang)
    if (!lang) throw new Error(`unknown language ${req.lang}`)
    reply({
      ok: await outline(lang, req.text, req.timeoutMs, req.limits, req.op, req.path, () =>
        reply({ started: true }),
      ),
    })
  } catch (err) {
    if (err instanceof ParseTimeout) reply({ timeout: true })
    else if (isVisError(err)) reply({ error: { code: err.code, message: err.message, context: err.context } })
    else
      reply({
        error: { code: 'tool.index-failed', message: `${req.op}: ${(err as Error).message}`, context: {} },
      })
  }
})
