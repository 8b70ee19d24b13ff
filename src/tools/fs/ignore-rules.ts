import type { Pacer } from '../../util/pacer.js'
import { compilePattern, GLOB_MAX_LENGTH, type Glob, GlobError } from './glob.js'

// .gitignore rules, git's way, matched by glob.ts's automaton: a sandbox writes these files and
// the host's tree walk tests every entry against them, so no rule may backtrack (the `ignore`
// package compiled them to regexes, where `**/a/` repeated stalled the host for seconds).

export interface IgnoreRule {
  glob: Glob
  // `!rule`: re-includes what an earlier rule ignored.
  negate: boolean
  // `rule/`: only directories.
  dirOnly: boolean
  // No `/` but a trailing one: the rule matches an entry's name at any depth below its file.
  byName: boolean
}

// Below this much work (states × characters) a rule is tested in one go.
const SMALL_TEST = 4096

// Drops trailing spaces unless the last is escaped with a backslash.
function trimTrailing(line: string): string {
  let end = line.length
  while (end > 0 && line[end - 1] === ' ' && line[end - 2] !== '\\') end--
  return line.slice(0, end)
}

function compileRule(raw: string): IgnoreRule | undefined {
  let line = trimTrailing(raw)
  if (line === '' || line.startsWith('#')) return undefined
  const negate = line.startsWith('!')
  if (negate) line = line.slice(1)
  const dirOnly = line.endsWith('/') && !line.endsWith('\\/')
  if (dirOnly) line = line.slice(0, -1)
  const byName = !line.includes('/')
  if (line.startsWith('/')) line = line.slice(1)
  // No path a rule could name is this long; such a rule is left out rather than matched.
  if (line === '' || line.length > GLOB_MAX_LENGTH) return undefined
  try {
    return { glob: compilePattern(line, 'gitignore'), negate, dirOnly, byName }
  } catch (err) {
    // git ignores a rule it cannot read (an unclosed or reversed class) rather than failing.
    if (err instanceof GlobError) return undefined
    throw err
  }
}

export async function compileIgnoreRules(text: string, pace: Pacer): Promise<IgnoreRule[]> {
  const rules: IgnoreRule[] = []
  for (const line of text.split(/\r?\n/)) {
    const rule = compileRule(line)
    if (rule) rules.push(rule)
    await pace.charge(line.length + 16)
  }
  return rules
}

// The last rule of one file that matches decides: true ignored, false re-included, undefined
// when none matches (the next, shallower file decides). `rel` is relative to the rules' file.
export async function ruleVerdict(
  rules: readonly IgnoreRule[],
  rel: string,
  isDir: boolean,
  pace: Pacer,
): Promise<boolean | undefined> {
  const name = rel.slice(rel.lastIndexOf('/') + 1)
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i]!
    if (r.dirOnly && !isDir) continue
    const subject = r.byName ? name : rel
    const work = r.glob.size * (subject.length + 1)
    let hit: boolean
    if (work <= SMALL_TEST) {
      hit = r.glob.test(subject)
      await pace.charge(work)
    } else hit = await r.glob.testPaced(subject, pace)
    if (hit) return !r.negate
  }
  return undefined
}
