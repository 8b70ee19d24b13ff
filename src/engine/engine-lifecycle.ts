import { resolve } from 'node:path'
import { closeRegistrationWorkers, ExtensionRegistry } from '../extensions/index.js'
import type { Store } from '../persistence/index.js'
import { openStore } from '../persistence/index.js'
import { RuntimeOptions, SessionFactory } from '../sessions/session-factory.js'
import { type Runtime, runtimeOver } from './create-runtime.js'
import type { EngineCore } from './engine-core.js'
import type { EngineOptions } from './engine-options.js'

// Start and close of an engine: the store, the runtime and the extensions, opened in that order
// and closed in reverse, so a failed start leaves nothing behind. Several engines may share a
// home; each runs only the sessions it owns (ownership.ts).

export type EngineParts = {
  store: Store
  // The engine's sessions' workers (pool, jail, Session), shared by its sessions with history
  // and its transient ones.
  factory: SessionFactory
  // The transient sessions (createRuntime's surface) over that factory.
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
  let factory: SessionFactory
  try {
    factory = new SessionFactory(
      RuntimeOptions.parse({
        home: store.home,
        python: options.python,
        pool: options.pool,
        interruptAckMs: options.interruptAckMs,
        // The engine binds them itself: only sessions with roots get file tools.
        defaultTools: false,
      }),
    )
  } catch (err) {
    store.close()
    throw err
  }
  // Transient sessions get the host tools the engine's other sessions get (options.tools, roots).
  const runtime = runtimeOver(factory, { defaultTools: options.tools !== false, rootedOnly: true })
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
    return build({ store, factory, runtime, extensions })
  } catch (err) {
    await extensions?.close()
    await closeRegistrationWorkers()
    await factory.close()
    store.close()
    throw err
  }
}

// Stops every worker; blocks still running finish with an error; the store is closed last.
// `hooks`: work of other parts over this engine (the agent's turns) to end before the workers stop.
export function closeEngine(core: EngineCore, hooks: ReadonlyArray<() => Promise<void>>): Promise<void> {
  core.closing ??= (async () => {
    await Promise.allSettled(hooks.map((h) => h()))
    await core.factory.close()
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
