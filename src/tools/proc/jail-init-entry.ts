import { entryScript } from '../../util/bundle.js'

// The script a tool jail runs first (jail-init). Built, it is dist/tools/proc/jail-init.js.
// From the TypeScript sources it is bundled once per host process into one self-contained
// file, so the jail needs to read only that file, node and vis_confine.node, never a
// TypeScript loader or node_modules.
export function jailInitEntry(): Promise<string> {
  return entryScript(import.meta.url, 'jail-init', { folder: 'tools' })
}
