// Runs a block against the lab: `attempt(f)` -> ["ok", value] or [error type(/reason type),
// message], the lab CA trusted through SSL_CERT_FILE (a file under the session's roots, which
// is all the worker can read); the block's last stdout line is its JSON result.
import assert from 'node:assert/strict'
import type { Session } from '../../../src/sessions/session.js'

export const ATTEMPT = `import asyncio, http.client, json, os, socket, ssl, urllib.error, urllib.request
def attempt(f):
    try:
        return ["ok", f()]
    except Exception as e:
        r = getattr(e, "reason", None)
        kind = type(e).__name__ + ("/" + type(r).__name__ if isinstance(r, BaseException) else "")
        return [kind, str(e)]
`

export async function runLabBlock(
  s: Session,
  ca: string,
  body: string,
  prelude = '',
): Promise<Record<string, [string, unknown]>> {
  const r = await s.runBlock(
    `${ATTEMPT}${prelude}os.environ["SSL_CERT_FILE"] = ${JSON.stringify(ca)}\n${body}`,
  )
  assert.equal(r.error, undefined, JSON.stringify(r.error))
  return JSON.parse((r.stdout ?? '').trim().split('\n').pop() ?? '{}')
}
