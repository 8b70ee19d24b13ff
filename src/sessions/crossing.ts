import { VisError } from '../util/errors.js'

// Checks that a value survives the JSON crossing unchanged (string keys, finite numbers,
// no functions, no cycles) and names the key path of the first thing that would not.
// `undefined` at the top is treated as null (a tool that returns nothing).
export function assertCrossable(value: unknown, what: string): void {
  const seen = new Set<object>()
  const walk = (v: unknown, path: string): void => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) fail(path, `the number ${v}`)
      return
    }
    if (typeof v !== 'object') fail(path, `a ${typeof v}`)
    const o = v as object
    if (seen.has(o)) fail(path, 'a cycle')
    seen.add(o)
    if (Array.isArray(o)) {
      for (let i = 0; i < o.length; i++) walk(o[i], `${path}[${i}]`)
    } else {
      const proto = Object.getPrototypeOf(o)
      if (proto !== Object.prototype && proto !== null)
        fail(path, `a ${proto?.constructor?.name ?? 'class'} instance`)
      for (const [k, x] of Object.entries(o)) {
        if (x === undefined) fail(`${path}.${k}`, 'undefined')
        walk(x, `${path}.${k}`)
      }
    }
    seen.delete(o)
  }
  const fail = (path: string, thing: string): never => {
    throw new VisError(
      'boundary.not-json',
      `${what} cannot cross to Python: ${thing} at ${path || '(root)'}`,
      {
        path: path || '(root)',
      },
    )
  }
  walk(value === undefined ? null : value, '')
}
