// Recognises files a model should not read as text, and a person reviewing a diff is shown
// only by name. Whether a file is text is decided from its bytes alone, as git decides it (a
// NUL byte), plus invalid UTF-8 (what cannot be shown as a string); only a file that is
// binary by that rule is then named by its magic number. Several magic numbers are plain ASCII
// that also starts valid source (`GIF89a = 0`, `RIFF=1`, `BZh`, `SQLite = 1`): naming by them
// first would hide a script's text behind "GIF image".
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

const utf8 = new TextDecoder('utf-8', { fatal: true })

// Why the bytes are not text ('binary data', 'non-UTF-8 data'), or undefined for text.
// `whole`: the bytes are the entire file, so a multi-byte character cut at their end is
// invalid; otherwise they are a sample, and such a cut is the sample's, not the file's.
function notText(bytes: Buffer, whole: boolean): string | undefined {
  if (bytes.includes(0)) return 'binary data'
  let end = bytes.length
  if (!whole) {
    for (let k = 1; k <= 3 && end - k >= 0; k++) {
      const b = bytes[end - k]!
      if ((b & 0xc0) === 0xc0) {
        end -= k
        break
      }
      if ((b & 0x80) === 0) break
    }
  }
  try {
    utf8.decode(bytes.subarray(0, end))
  } catch {
    return 'non-UTF-8 data'
  }
  return undefined
}

// A binary file's kind, named by its magic number when it has a known one.
function named(bytes: Buffer, why: string): string {
  for (const [magic, type] of MAGIC) {
    if (bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b)) return type
  }
  return why
}

// Returns a description when the sample (a file's first bytes) is binary, undefined for text.
export function sniffBinary(sample: Buffer): string | undefined {
  const why = notText(sample, false)
  return why === undefined ? undefined : named(sample, why)
}

// The same rule over a file's entire content: text only when all of it is text, so what is
// shown as text is every byte of the file.
export function binaryContent(data: Buffer): string | undefined {
  const why = notText(data, true)
  return why === undefined ? undefined : named(data, why)
}

// Length of the valid UTF-8 sequence at data[i], or 0 when none starts there (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF).
function sequenceAt(data: Buffer, i: number): number {
  const b = data[i]!
  if (b < 0x80) return 1
  const [n, lo, hi] =
    b >= 0xc2 && b <= 0xdf
      ? [2, 0x80, 0xbf]
      : b === 0xe0
        ? [3, 0xa0, 0xbf]
        : b === 0xed
          ? [3, 0x80, 0x9f]
          : b >= 0xe1 && b <= 0xef
            ? [3, 0x80, 0xbf]
            : b === 0xf0
              ? [4, 0x90, 0xbf]
              : b === 0xf4
                ? [4, 0x80, 0x8f]
                : b >= 0xf1 && b <= 0xf3
                  ? [4, 0x80, 0xbf]
                  : [0, 0, 0]
  if (n === 0 || i + n > data.length) return 0
  if (data[i + 1]! < lo || data[i + 1]! > hi) return 0
  for (let k = 2; k < n; k++) if ((data[i + k]! & 0xc0) !== 0x80) return 0
  return n
}

// A text file's content as a string that shows every byte: UTF-8 as it is, and each byte that is
// not part of valid UTF-8 (a file in a legacy encoding) as `\xNN`, so such a file is shown as
// text rather than hidden behind "non-UTF-8 data" (a latin-1 script still runs).
export function visibleText(data: Buffer): string {
  if (notText(data, true) === undefined) return data.toString('utf8')
  let out = ''
  let run = 0
  for (let i = 0; i < data.length; ) {
    const n = sequenceAt(data, i)
    if (n > 0) {
      i += n
      continue
    }
    out += `${data.subarray(run, i).toString('utf8')}\\x${data[i]!.toString(16).padStart(2, '0')}`
    i++
    run = i
  }
  return out + data.subarray(run).toString('utf8')
}
