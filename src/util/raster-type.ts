// The raster image formats recognised from their own bytes (PNG, JPEG, GIF, WebP): the only
// attachments served inline, by the HTTP route (http/attachment-response.ts) and in an MCP tool
// result (mcp/server/render.ts), typed as their bytes say. A type the sandbox claims never decides.

const RASTER: readonly { type: string; matches: (b: Uint8Array) => boolean }[] = [
  { type: 'image/png', matches: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { type: 'image/jpeg', matches: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  { type: 'image/gif', matches: (b) => ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a') },
  { type: 'image/webp', matches: (b) => ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP') },
]

const startsWith = (b: Uint8Array, magic: readonly number[]) =>
  b.length >= magic.length && magic.every((x, i) => b[i] === x)

const ascii = (b: Uint8Array, at: number, text: string) =>
  b.length >= at + text.length && [...text].every((ch, i) => b[at + i] === ch.charCodeAt(0))

// The raster type the bytes themselves are, if any.
export function rasterType(bytes: Uint8Array): string | undefined {
  return RASTER.find((r) => r.matches(bytes))?.type
}

// Whether a media type (without parameters, lower case) names one of those formats.
export function isRasterType(type: string): boolean {
  return RASTER.some((r) => r.type === type)
}
