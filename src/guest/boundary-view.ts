import { VisError } from '../util/errors.js'

// What a value looks like after it crossed to Python and back as JSON: plain objects,
// arrays, strings, finite numbers, booleans and null. Anything else anywhere in it (a
// function, undefined, NaN, a class instance, a Map, a cycle, a sparse array's hole) is a
// producer bug; the error names the key path so it can be fixed where it was made.
export function boundaryView(value: unknown, what = 'value'): unknown {
  const stack = new Set<object>()
  const fail = (path: string, thing: string): never => {
    throw new VisError('boundary.not-json', `${what} cannot cross the boundary: ${thing} at ${path}`, {
      path,
    })
  }
  const walk = (v: unknown, path: string): unknown => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return v
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) fail(path, `the number ${v}`)
      return v === 0 ? 0 : v
    }
    if (typeof v !== 'object') return fail(path, v === undefined ? 'undefined' : `a ${typeof v}`)
    const o = v as object
    if (stack.has(o)) fail(path, 'a cycle')
    stack.add(o)
    try {
      if (Array.isArray(o)) {
        const out: unknown[] = []
        for (let i = 0; i < o.length; i++) {
          if (!(i in o)) fail(`${path}[${i}]`, 'a hole')
          out.push(walk(o[i], `${path}[${i}]`))
        }
        return out
      }
      const proto = Object.getPrototypeOf(o)
      if (proto !== Object.prototype && proto !== null) {
        fail(path, `a ${proto?.constructor?.name ?? 'class'} instance (only plain objects cross)`)
      }
      if (Object.getOwnPropertySymbols(o).length > 0) fail(path, 'a symbol key (only string keys cross)')
      const out: Record<string, unknown> = {}
      for (const [k, x] of Object.entries(o)) out[k] = walk(x, `${path}${keyPath(k)}`)
      return out
    } finally {
      stack.delete(o)
    }
  }
  return walk(value, '$')
}

function keyPath(k: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`
}
