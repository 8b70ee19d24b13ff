import { randomUUID } from 'node:crypto'

// Prefixed so an id says what it names when it shows up in a log or a URL.
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`
}
