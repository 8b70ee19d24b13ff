// Recognises files a model should not read as text.
const MAGIC: [number[], string][] = [
  [[0x89, 0x50, 0x4e, 0x47], 'PNG image'],
  [[0xff, 0xd8, 0xff], 'JPEG image'],
  [[0x47, 0x49, 0x46, 0x38], 'GIF image'],
  [[0x25, 0x50, 0x44, 0x46], 'PDF document'],
  [[0x50, 0x4b, 0x03, 0x04], 'ZIP archive'],
  [[0x1f, 0x8b], 'gzip archive'],
  [[0x28, 0xb5, 0x2f, 0xfd], 'zstd archive'],
  [[0x42, 0x5a, 0x68], 'bzip2 archive'],
  [[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], 'xz archive'],
  [[0x7f, 0x45, 0x4c, 0x46], 'ELF executable'],
  [[0x00, 0x61, 0x73, 0x6d], 'WebAssembly module'],
  [[0x53, 0x51, 0x4c, 0x69, 0x74, 0x65], 'SQLite database'],
  [[0x52, 0x49, 0x46, 0x46], 'RIFF media'],
]

export const SNIFF_BYTES = 8192

// Returns a description when the sample looks binary, undefined for text.
export function sniffBinary(sample: Buffer): string | undefined {
  for (const [magic, type] of MAGIC) {
    if (sample.length >= magic.length && magic.every((b, i) => sample[i] === b)) return type
  }
  if (sample.includes(0)) return 'binary data'
  // Drop a multi-byte character cut at the end of the sample before decoding.
  let end = sample.length
  for (let k = 1; k <= 3 && end - k >= 0; k++) {
    const b = sample[end - k]!
    if ((b & 0xc0) === 0xc0) {
      end -= k
      break
    }
    if ((b & 0x80) === 0) break
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(sample.subarray(0, end))
  } catch {
    return 'non-UTF-8 data'
  }
  return undefined
}
