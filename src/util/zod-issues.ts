import type { z } from 'zod'

// A zod failure as one line a person or a model can act on: `path: message; ...`. An issue
// about the whole value is named `root` when the caller gives one, else shown bare. Every
// boundary that reports bad input this way says it the same way.
export function issuesText(error: z.ZodError, root?: string): string {
  return error.issues
    .map((i) => {
      const where = i.path.join('.') || root
      return where ? `${where}: ${i.message}` : i.message
    })
    .join('; ')
}
