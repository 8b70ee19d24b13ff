// What the tarball carries besides code: the LICENSE its package.json declares, and every
// document the README (also in the tarball) links or names, so a link on the registry's page or
// in an installed package never points at nothing. Asked of npm itself (`npm pack --dry-run`).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { repoRoot, runCollected, tempDir } from './helpers.js'

test('the tarball ships LICENSE (MIT, the vis-runtime authors) and every document the README links', {
  timeout: 120_000,
}, async () => {
  const r = await runCollected(
    'npm',
    ['pack', '--dry-run', '--json', '--ignore-scripts', '--cache', join(tempDir('vis-pack-cache-'), 'c')],
    { cwd: repoRoot },
  )
  assert.equal(r.status, 0, r.out)
  const listed = JSON.parse(r.out.slice(r.out.indexOf('['))) as { files: { path: string }[] }[]
  const files = new Set((listed[0]?.files ?? []).map((f) => f.path))

  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { license: string }
  assert.equal(pkg.license, 'MIT')
  assert.ok(files.has('LICENSE'), 'LICENSE is packed')
  const license = readFileSync(join(repoRoot, 'LICENSE'), 'utf8')
  assert.match(license, /^MIT License\n\nCopyright \(c\) \d{4} the vis-runtime authors\n/)
  assert.match(license, /THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND/)

  // Markdown links to files, and the docs/… and *.md paths the prose names.
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
  const linked = new Set<string>()
  for (const m of readme.matchAll(/\]\(([^)#:\s]+)(#[^)]*)?\)/g)) linked.add(m[1] as string)
  for (const m of readme.matchAll(/\b(docs\/[\w./-]+\.md|SECURITY\.md|DEVELOPERS\.md)\b/g))
    linked.add(m[1] as string)
  assert.ok(linked.has('SECURITY.md') && linked.has('docs/ARCHITECTURE.md'), [...linked].join(', '))
  const missing = [...linked].filter((p) => !files.has(p))
  assert.deepEqual(missing, [], `the README links these, the tarball leaves them out: ${missing.join(', ')}`)
})
