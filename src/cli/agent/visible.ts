// What the CLI prints to a person's terminal from the sandbox (a review diff, a block's output,
// tool arguments) goes through this: a file or a print can carry `\r`, `ESC[2K`, `ESC[1A`,
// OSC 8 links or title sequences that make the terminal erase or rewrite what the person is
// about to approve. Control characters are shown, never obeyed: CR as `\r`, other C0 controls
// in caret notation (ESC as `^[`), DEL as `^?`, C1 controls as `\x9b`. Newline and tab stay.
// Character by character, so text streamed in chunks is escaped the same.
export function visibleControls(s: string): string {
  return s.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, (ch) => {
    const c = ch.charCodeAt(0)
    if (ch === '\r') return '\\r'
    if (c < 0x20) return `^${String.fromCharCode(c + 0x40)}`
    if (c === 0x7f) return '^?'
    return `\\x${c.toString(16)}`
  })
}

// JSON for a terminal (`--json`, `--format json` on stdout): JSON.stringify already escapes C0
// controls, but DEL and the C1 controls (U+009B is a CSI to some terminals) go out as they are.
// Written as \u escapes instead, the same JSON value: nothing is lost, unlike visibleControls.
export function visibleJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    /[\x7f-\x9f]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}
