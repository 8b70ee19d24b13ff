// ATTACK (surface 4, "attachments must never be served inline as a document"; the MCP front door):
// an attachment's media type comes from the sandbox ("the guest sniffs the type, and guest code may
// claim any", SECURITY.md, Attachments), so the HTTP route decides inline or download from the
// BYTES (PNG, JPEG, GIF, WebP by their magic; src/util/raster-type.ts rasterType). The MCP
// server's tool result does not: `blockResult` (src/mcp/server/render.ts) sends an attachment
// inline, as MCP image content the host renders, when its CLAIMED type starts with `image/` and is
// not exactly `image/svg+xml`. The claim is the sandbox's: `image/svg+xml; charset=utf-8` (or
// `IMAGE/SVG+XML`) is not exactly that string, so an SVG document with script goes to the MCP host
// inline, typed as SVG, where the code meant to send it as a link. (The guest's sniffer is replaced
// through the helper's own globals; `import vis_guest.attach` is refused, `__globals__` is not, and
// neither is a boundary.)
// Here: a block attaches an SVG with an onload handler and a script under that claimed type, and a
// real PNG. Every `image` item of the `python_execution` result must be a raster image by its
// bytes; on the current code the SVG is one of them.
// Both directions: the PNG still comes inline.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { rasterType } from '../../src/util/raster-type.js'
import { mcpOverHttp, textOf } from '../mcp/helpers.js'

const TOKEN = 'attack16b-mcp-inline-svg-token-0123456789ab'

test('the MCP tool result sends inline only attachments whose bytes are raster images', async () => {
  const { client: c, close } = await mcpOverHttp('mcp-inline-svg', TOKEN)
  try {
    const code = [
      'g = vis_attach_bytes.__globals__',
      'real = g["sniff"]',
      "g['sniff'] = lambda head, name: 'image/svg+xml; charset=utf-8' if name.endswith('.svg') else real(head, name)",
      'vis_attach_bytes(b\'<svg xmlns="http://www.w3.org/2000/svg" onload="fetch(1)"><script>fetch(2)</script></svg>\', \'x.svg\')',
      "vis_attach_bytes(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(32), 'y.png')",
      "'done'",
    ].join('\n')
    const r = (await c.callTool({ name: 'python_execution', arguments: { code } }, undefined, {
      timeout: 120_000,
    })) as CallToolResult
    assert.equal(r.isError, false, textOf(r).slice(0, 300))
    const images = r.content.filter((x) => x.type === 'image') as Array<{ data: string; mimeType: string }>
    // Allowed: the PNG is inline.
    assert.ok(
      images.some((x) => x.mimeType === 'image/png'),
      `the PNG is inline: ${JSON.stringify(r.content).slice(0, 400)}`,
    )
    const documents = images
      .filter((x) => rasterType(Buffer.from(x.data, 'base64')) === undefined)
      .map((x) => `${x.mimeType}: ${Buffer.from(x.data, 'base64').toString('latin1').slice(0, 60)}`)
    assert.deepEqual(
      documents,
      [],
      `the python_execution result carried inline, as MCP image content, attachments that are no raster image ` +
        `by their bytes (the claimed type decided): ${documents.join('; ')}`,
    )
  } finally {
    await close()
  }
})
