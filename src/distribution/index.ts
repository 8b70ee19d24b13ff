// The distribution API: find, fetch and stage the CPython the runtime embeds.
export { packTree, sha256File, unpackArchive } from './archive.js'
export { type BuildTree, validateBuildTree } from './checkout.js'
export { findLocalPython, type LocalPython, localPythonCandidates, probePython } from './discover.js'
export { type FetchOptions, fetchIntoCache } from './fetch.js'
export { archiveName, cacheRoot, defaultDistDir, stagedMinors, stagedTreeRoot, treePaths } from './layout.js'
export {
  type ArchiveManifest,
  ArchiveManifestSchema,
  type DistManifest,
  DistManifestSchema,
  readDistManifest,
  writeManifest,
} from './manifest.js'
export { isSupportedMinor, minorOf, platformTag, SUPPORTED_MINORS } from './platform.js'
export { noProgress, type OnProgress, type ProgressEvent, progressPrinter } from './progress.js'
export {
  DEFAULT_DIST_URL,
  type DistSource,
  distBaseUrl,
  type Explanation,
  explainResolution,
  type ResolvedDistribution,
  type ResolveOptions,
  resolveDistribution,
  SOURCES,
  type SourceReport,
  selectMinor,
  stagedDir,
} from './resolve.js'
export { type StageOptions, type StageResult, stageFromPython, stageMinor } from './stage.js'
export { stageFromArchive } from './stage-archive.js'
export { type ValidTree, validateTree } from './validate.js'
