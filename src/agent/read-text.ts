import { readFirstTextBeneath, readTextBeneath, type TextFile } from '../confinement/read-text.js'

// Prompt text the host reads from a directory (AGENTS.md/CLAUDE.md, a prompt template): never
// more than this, so a huge file cannot swell every turn's prompt or the host's memory.
export const MAX_PROMPT_FILE_BYTES = 256 * 1024

export type PromptFile = TextFile

// Beneath the directory's fd, no links under a session root (`strict`), no FIFOs, bounded.
export function readPromptFile(dir: string, name: string, strict: boolean): Promise<PromptFile> {
  return readTextBeneath(dir, name, strict, MAX_PROMPT_FILE_BYTES)
}

// The first of `names` present in the directory, read as readPromptFile reads one.
export function readFirstPromptFile(
  dir: string,
  names: readonly [string, ...string[]],
  strict: boolean,
): Promise<{ name: string; file: PromptFile }> {
  return readFirstTextBeneath(dir, names, strict, MAX_PROMPT_FILE_BYTES)
}
