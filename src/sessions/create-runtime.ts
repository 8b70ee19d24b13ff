// The pinned simple path's module (createRuntime → createSession → runBlock): its options are
// the session factory's contract, and createRuntime itself is the engine's transient-session
// facade (src/engine/create-runtime.ts). This one re-export crosses the layers upward, so the
// path users and tests import keeps working (docs/ARCHITECTURE.md, test/house/layers.test.ts).
export { createRuntime, type Runtime } from '../engine/create-runtime.js'
export { RuntimeOptions, SessionOptions } from './session-factory.js'
