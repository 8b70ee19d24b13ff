import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type Transferable, Worker } from 'node:worker_threads'

// A worker_threads Worker running the module `<name>.js` beside `base` (an import.meta.url): the
// built file in dist/. Running from source under tsx (tests, dev), Node 20 does not hand the
// process's --import hooks to a worker, so a tiny bootstrap registers tsx in the worker first and
// then imports `<name>.ts`.
export function startModuleWorker(
  base: string,
  name: string,
  opts: { workerData?: unknown; transferList?: Transferable[] } = {},
): Worker {
  const js = new URL(`./${name}.js`, base)
  if (existsSync(fileURLToPath(js))) return new Worker(js, opts)
  const tsx = import.meta.resolve('tsx/esm/api')
  const ts = new URL(`./${name}.ts`, base).href
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(ts)}) })`
  return new Worker(boot, { ...opts, eval: true })
}
