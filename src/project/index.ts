export {
  DeclaredEntry,
  DeclaredLayout,
  LAYOUT_METADATA,
  LayoutWarning,
  readDeclaredLayout,
} from './declared.js'
export {
  discoverProjectLayout,
  isDirWithin,
  type ProjectLayout,
  type ProjectLayoutOptions,
} from './layout.js'
