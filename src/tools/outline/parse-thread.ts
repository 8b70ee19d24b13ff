// The index's parser thread (parse-pool.ts starts it): tree-sitter parses here, so a large or
// slow file never holds up the host's event loop, which serves every session.
import { parentPort } from 'node:worker_threads'
import { adoptHostDependencyDirs } from '../../util/dependency-dirs.js'
import { isVisError } from '../../util/errors.js'
import { noteSessionRoot } from '../../util/host-programs.js'
import { LANGUAGES } from './languages.js'
import { outline, ParseTimeout } from './parse.js'
import type { ParseReply, ParseRequest } from './parse-pool.js'

const port = parentPort!

// The VisErrors this thread raises on purpose, except grammar-incompatible: that one wraps
// whatever the WASM grammar load threw, a trap included.
function mayWrapTrap(code: string): boolean {
  return code === 'tool.grammar-incompatible'
}

port.on('message', async (req: ParseRequest) => {
  const reply = (r: Omit<ParseReply, 'id'>) => port.postMessage({ id: req.id, ...r })
  // What the main thread knows of roots and dependency directories, this thread's modules do not.
  for (const r of req.roots) noteSessionRoot(r)
  adoptHostDependencyDirs(req.dependencyDirs)
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
    else if (isVisError(err) && !mayWrapTrap(err.code))
      reply({ error: { code: err.code, message: err.message, context: err.context } })
    // A WebAssembly trap (out-of-bounds access, bad table index...) is caught like any
    // error, but it leaves the runtime's memory in whatever state it faulted in: the thread
    // is retired (retire), never reused for another session's file.
    else
      reply({
        retire: true,
        error: {
          code: 'tool.index-failed',
          message: `${req.op}: the parser failed on '${req.path}' (${(err as Error).message}); the file cannot be indexed, use grep or cat instead`,
          context: { op: req.op, path: req.path },
        },
      })
  }
})
