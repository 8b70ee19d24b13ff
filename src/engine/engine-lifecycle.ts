import { resolve } from 'node:path'
import { closeRegistrationWorkers, ExtensionRegistry } from '../extensions/index.js'
import type { Store } from '../persistence/index.js'
import { openStore } from '../persistence/index.js'
import { createRuntime, type Runtime } from '../sessions/create-runtime.js'
import type { EngineCore } from './engine-core.js'
import type { EngineOptions } from './engine-options.js'

// Start and close of an engine: the store, the runtime and the extensions, opened in that order
// and closed in reverse, so a failed start leaves nothing behind. Several engines may share a
// home; each runs only the sessions it owns (ownership.ts).

export type EngineParts = {
  store: Store
  runtime: Runtime
  extensions: ExtensionRegistry | undefined
}

// Opens what an engine runs on, then `build` makes the engine from it; whatever fails undoes
// what was opened before.
export async function startEngine<E>(options: EngineOptions, build: (parts: EngineParts) => E): Promise<E> {
  const store: Store = openStore({
    home: options.home,
    durability: options.durability,
    eventRetention: options.eventRetention,
    databaseUrl: options.databaseUrl,
  })
  let runtime: Runtime
  try {
    runtime = await createRuntime({
      home: store.home,
      python: options.python,
      pool: options.pool,
      interruptAckMs: options.interruptAckMs,
      // The engine binds them itself: only sessions with roots get file tools.
      defaultTools: false,
    })
  } catch (err) {
    store.close()
    throw err
  }
  let extensions: ExtensionRegistry | undefined
  try {
    if (options.extensions !== false) {
      extensions = await ExtensionRegistry.open({
        home: store.home,
        project: options.project === undefined ? undefined : resolve(options.project),
        python: options.python,
        store,
      })
    }
    return build({ store, runtime, extensions })
  } catch (err) {
    await extensions?.close()
    await closeRegistrationWorkers()
    await runtime.close()
    store.close()
    throw err
  }
}

// Stops every worker; blocks still running finish with an error; the store is closed last.
// `hooks`: work of other parts over this engine (the agent's turns) to end before the workers stop.
export function closeEngine(core: EngineCore, hooks: ReadonlyArray<() => Promise<void>>): Promise<void> {
  core.closing ??= (async () => {
    await Promise.allSettled(hooks.map((h) => h()))
    await core.runtime.close()
    await Promise.all([...core.lives.keys()].map((id) => core.drafts.releaseMount(id)))
    await core.extensions?.close()
    await closeRegistrationWorkers()
    await Promise.allSettled([...core.pending.values()])
    core.log.flushAll()
    core.ownership?.close()
    core.store.close()
  })()
  return core.closing
}
