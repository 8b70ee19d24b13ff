import { TrustedWorker } from './trusted-worker.js'

// Every file is first evaluated here: one trusted worker shared by the whole host process,
// started on first use. It only reports sealed manifests; tools never run in it.
const shared = new Map<string, Promise<TrustedWorker>>()

export function registrationWorker(home: string, python?: string): Promise<TrustedWorker> {
  const key = python ?? ''
  const have = shared.get(key)
  if (have) {
    return have.then((w) => {
      if (w.alive) return w
      if (shared.get(key) === have) shared.delete(key)
      return registrationWorker(home, python)
    })
  }
  const p = TrustedWorker.start({ home, python })
  shared.set(key, p)
  p.catch(() => {
    if (shared.get(key) === p) shared.delete(key)
  })
  return p
}

export async function closeRegistrationWorkers(): Promise<void> {
  const all = [...shared.values()]
  shared.clear()
  await Promise.all(all.map((p) => p.then((w) => w.close()).catch(() => undefined)))
}

let tail: Promise<unknown> = Promise.resolve()

// One full load at a time: a load prepares the shared worker's sys.path and module cache for
// its own directories, which another registry's load must not change halfway.
export function exclusive<T>(fn: () => Promise<T>): Promise<T> {
  const run = tail.then(fn)
  tail = run.catch(() => undefined)
  return run
}
