import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { packageRoot } from './home.js'

// The installed package's version (package.json), or "unknown" when it cannot be read.
export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string })
      .version
  } catch {
    return 'unknown'
  }
}
