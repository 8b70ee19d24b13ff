import { readFileSync, writeFileSync } from 'node:fs'
import { VisError } from '../util/errors.js'
import { hasProgram, run } from './tools.js'

// Points the staged binary at its own lib/ so it runs without
// LD_LIBRARY_PATH wherever the tree is moved. A statically linked binary
// (Debian's) needs nothing.
export async function setRunpath(file: string, runpath: string): Promise<'patchelf' | 'in-place' | 'static'> {
  const dynamic = await run('readelf', ['-d', file], { code: 'dist.stage' })
  if (!/\(NEEDED\).*\[libpython/.test(dynamic)) return 'static'
  if (await hasProgram('patchelf')) {
    await run('patchelf', ['--set-rpath', runpath, file], { code: 'dist.stage' })
    return 'patchelf'
  }
  // Without patchelf, overwrite the old search path string in .dynstr when the
  // new one fits: same offsets, NUL padding.
  const old = /\((?:RUNPATH|RPATH)\)[^[]*\[([^\]]*)\]/.exec(dynamic)?.[1]
  const fail = (why: string): never => {
    throw new VisError('dist.stage', `cannot set the RUNPATH of ${file} (${why}); install patchelf`, {
      path: file,
    })
  }
  if (!old) fail('it has none to rewrite')
  if (old!.length < runpath.length) fail(`"${old}" is shorter than "${runpath}"`)
  const buf = readFileSync(file)
  const needle = Buffer.from(`${old}\0`)
  const at = buf.indexOf(needle)
  if (at < 0 || buf.indexOf(needle, at + 1) >= 0) fail('the search path string is not unique')
  buf.fill(0, at, at + old!.length)
  buf.write(runpath, at)
  writeFileSync(file, buf)
  return 'in-place'
}
