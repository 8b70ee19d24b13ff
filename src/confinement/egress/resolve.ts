import { lookup } from 'node:dns/promises'

// How the egress proxy turns a name into addresses. The host's resolver, unless a test
// lab (lab.ts, imported only by the test suite) has put a map in its place: then only
// the map answers and no real lookup is ever made.
export type LabAnswer = string[] | (() => string[])
let labNames: Map<string, LabAnswer> | undefined

export function setLabNames(names: Map<string, LabAnswer> | undefined): void {
  labNames = names
}

export async function resolveName(name: string): Promise<string[]> {
  if (labNames) {
    const answer = labNames.get(name)
    if (answer === undefined)
      throw Object.assign(new Error(`${name}: no such lab name`), { code: 'ENOTFOUND' })
    return typeof answer === 'function' ? answer() : [...answer]
  }
  return (await lookup(name, { all: true, verbatim: true })).map((a) => a.address)
}
