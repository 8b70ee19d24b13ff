import { VisError } from '../util/errors.js'
import { isLoopbackName } from './middleware/host.js'

// Loopback is reachable only from this machine, so it needs no token; any other address does.
export const isLoopbackHost = (host: string): boolean =>
  !host.toLowerCase().endsWith('.localhost') && isLoopbackName(host)

// Refuses to serve a non-loopback address without a token, before anything listens.
export function requireTokenFor(host: string, token: string | undefined): void {
  if (isLoopbackHost(host)) return
  if (token === undefined || token.length === 0) {
    throw new VisError(
      'http.token-required',
      `Binding to ${host} exposes the API beyond this machine; set VIS_TOKEN to a secret bearer token, or bind to 127.0.0.1.`,
      { host },
    )
  }
  if (token.length < 16) {
    throw new VisError('http.token-weak', 'VIS_TOKEN must be at least 16 characters long.', { host })
  }
}
