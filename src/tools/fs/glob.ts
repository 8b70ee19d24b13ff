// A small glob dialect for grep's `include`: `*` and `?` stay within one
// path component, `**` crosses them, `[...]` is a class, `{a,b}` a choice.
// A glob without `/` matches the file name at any depth; one with `/`
// matches the path relative to the workspace.
export function globToRegExp(glob: string): RegExp {
  let re = ''
  let depth = 0
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === '*') {
      if (glob[i + 1] === '*') {
        i++
        if (glob[i + 1] === '/') {
          i++
          re += '(?:.*/)?'
        } else re += '.*'
      } else re += '[^/]*'
    } else if (c === '?') re += '[^/]'
    else if (c === '[') {
      const close = glob.indexOf(']', i + 2)
      if (close < 0) re += '\\['
      else {
        let body = glob.slice(i + 1, close).replace(/\\/g, '\\\\')
        if (body.startsWith('!')) body = `^${body.slice(1)}`
        re += `[${body}]`
        i = close
      }
    } else if (c === '{') {
      depth++
      re += '(?:'
    } else if (c === '}' && depth > 0) {
      depth--
      re += ')'
    } else if (c === ',' && depth > 0) re += '|'
    else re += c.replace(/[.+^$()|\\\]{}]/g, '\\$&')
  }
  return new RegExp(`^${re}$`)
}

export function globMatcher(globs: readonly string[]): (relPath: string) => boolean {
  if (globs.length === 0) return () => true
  const tests = globs.map((g) => {
    const re = globToRegExp(g.replace(/^\.\//, ''))
    return g.includes('/')
      ? (p: string) => re.test(p)
      : (p: string) => re.test(p.slice(p.lastIndexOf('/') + 1))
  })
  return (p) => tests.some((t) => t(p))
}
