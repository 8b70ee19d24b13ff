// A Python string literal for any JS string. Code points above U+FFFF are written as one
// \U escape: writing a surrogate pair as two \u escapes would give Python two lone
// surrogates instead of the character. Lone surrogates stay lone (\uXXXX), as in JSON.
export function pyString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'"
  let out = quote
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number
    if (ch === '\\') out += '\\\\'
    else if (ch === quote) out += `\\${quote}`
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\t') out += '\\t'
    else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) out += `\\x${hex(cp, 2)}`
    else if (cp >= 0xd800 && cp <= 0xdfff) out += `\\u${hex(cp, 4)}`
    else if (cp === 0x2028 || cp === 0x2029 || cp === 0xfeff) out += `\\u${hex(cp, 4)}`
    else if (cp > 0xffff) out += `\\U${hex(cp, 8)}`
    else out += ch
  }
  return out + quote
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0')
}

// A Python float/int literal for a finite JS number (Python pads exponents to two digits).
export function pyNumber(n: number): string {
  if (Object.is(n, -0)) return '-0.0'
  const text = String(n)
  return text.replace(/e([+-])(\d)$/, 'e$10$2')
}
