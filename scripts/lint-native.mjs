#!/usr/bin/env node
// Checks the C and C++ sources (native/ and any other .c/.cc/.h in the tree) against
// .clang-format with clang-format (Debian's `clang-format` package).
//   node scripts/lint-native.mjs          clang-format --dry-run --Werror: lists each departure, exit 1 if any
//   node scripts/lint-native.mjs --write  reformat in place
import { spawnSync } from 'node:child_process'
import { repoRoot, sourceFiles } from './lint-files.mjs'

const write = process.argv.includes('--write')
const files = sourceFiles(['.c', '.cc', '.h'])
const args = write ? ['-i', ...files] : ['--dry-run', '--Werror', ...files]
const run = spawnSync(process.env.CLANG_FORMAT ?? 'clang-format', args, { cwd: repoRoot, stdio: 'inherit' })
if (run.error) {
  console.error(
    `cannot run clang-format (${run.error.message}); install it (Debian: apt-get install clang-format) or set CLANG_FORMAT`,
  )
  process.exit(1)
}
if (run.status !== 0) {
  if (!write)
    console.error(`clang-format: ${files.length} C/C++ files checked; \`npm run format\` rewrites them`)
  process.exit(run.status ?? 1)
}
