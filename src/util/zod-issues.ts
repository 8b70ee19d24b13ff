import type { z } from 'zod'

// A zod failure as one line a person or a model can act on: `path: message; ...`. An issue
// about the whole value is named `root` when the caller gives one, else shown bare. Every
// boundary that reports bad input this way says it the same way.
export function issuesText(error: z.ZodError, root?: string): string {
  return error.issues
    .map((i) => {
      const where = i.path.join('.') || root
      const message = missingUnion(i) ? 'Required' : i.message
      return where ? `${where}: ${message}` : message
    })
    .join('; ')
}

// A union (`str | list[str]`) given nothing fails as zod's bare "Invalid input"; what the
// caller needs to hear is that the argument is missing, as for any other type.
function missingUnion(i: z.ZodIssue): boolean {
  if (i.code !== 'invalid_union' || i.unionErrors.length === 0) return false
  const at = i.path.join('.')
  return i.unionErrors.every((e) =>
    e.issues.some((u) => u.code === 'invalid_type' && u.received === 'undefined' && u.path.join('.') === at),
  )
}
