// The distribution API: find, fetch and stage the CPython the runtime embeds.
export { packTree, sha256File, unpackArchive } from './archive.js'
export { type BuildTree, validateBuildTree } from './checkout.js'
export { findLocalPython, type LocalPython, localPythonCandidates, probePython } from './discover.js'
export { archiveName, stagedTreeRoot, treePaths } from './layout.js'
export {
  type ArchiveManifest,
  ArchiveManifestSchema,
  type DistManifest,
  DistManifestSchema,
  readDistManifest,
} from './manifest.js'
export { isSupportedMinor, minorOf, platformTag, SUPPORTED_MINORS } from './platform.js'
export { noProgress, type OnProgress, type ProgressEvent, progressPrinter } from './progress.js'
export {
  cacheRoot,
  DEFAULT_DIST_URL,
  type DistSource,
  distBaseUrl,
  type Explanation,
  explainResolution,
  fetchIntoCache,
  type ResolvedDistribution,
  type ResolveOptions,
  resolveDistribution,
  SOURCES,
  type SourceReport,
  selectMinor,
  stagedDir,
} from './resolve.js'
export {
  defaultDistDir,
  type StageOptions,
  type StageResult,
  stagedMinors,
  stageFromArchive,
  stageFromPython,
  stageMinor,
} from './stage.js'
export { type ValidTree, validateTree } from './validate.js'
