import { errorAnswer } from '../errors.js'
import type { GuardRequest, Refusal } from './refusal.js'

// Every request body is JSON. Refusing anything else also refuses what a browser may send across
// origins without a preflight (text/plain, form encodings, multipart).
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

const hasBody = (req: GuardRequest) => {
  const length = req.header('content-length')
  return (length !== undefined && length.trim() !== '0') || req.header('transfer-encoding') !== undefined
}

// A body that is not JSON: 415.
export function contentTypeRefusal(req: GuardRequest): Refusal | undefined {
  // A GET or HEAD has no body a route reads (and none a browser sends): its Content-Type, which
  // some clients set on every request, is nobody's business.
  if (req.method === 'GET' || req.method === 'HEAD') return undefined
  const type = req.header('content-type')
  // A content type is judged even on an empty body: a form post with nothing in it is still a form.
  if ((type !== undefined && !JSON_TYPE.test(type)) || (type === undefined && hasBody(req))) {
    return errorAnswer(
      'http.unsupported-media-type',
      `Request bodies must be JSON: send Content-Type: application/json${type ? `, not ${type}` : ''}.`,
      { contentType: type ?? null },
    )
  }
  return undefined
}
