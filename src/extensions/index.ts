export {
  type Discovery,
  discoverExtensions,
  type ExtensionScope,
  type ExtensionSource,
  extensionDirs,
} from './discover.js'
export { extensionChecks, warningChecks } from './doctor.js'
export { ExtensionManifest, type TestRecord } from './manifest.js'
export { closeRegistrationWorkers } from './registration.js'
export {
  type BindableSession,
  ExtensionRegistry,
  type ExtensionWarning,
  type LoadedExtension,
  type RegistryOptions,
} from './registry.js'
export {
  countRecords,
  type ExtensionTestReport,
  runExtensionTests,
  type TestCounts,
  testFilesOf,
} from './tests.js'
export { TrustedWorker } from './trusted-worker.js'
