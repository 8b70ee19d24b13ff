import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Context, Hono } from 'hono'
import { packageRoot } from '../../util/home.js'

// The session page: plain files under web/ (no build step), served as they are. Mounted beside
// the API, behind the Host guard but open without the token (GET of these files only): the
// page reads the token from the URL `vis serve` prints, keeps it in localStorage (per port, unlike
// a cookie) and sends it as `Authorization: Bearer` on each of its API calls.

export const PAGE_DIR = join(packageRoot, 'web')

// The page's script modules (app.js imports the rest).
const MODULES = [
  'app.js',
  'dom.js',
  'state.js',
  'sessions.js',
  'blocks.js',
  'drafts.js',
  'turns.js',
  'approvals.js',
  'authed.js',
]

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  // Browsers ask for it on every load; a 404 there is noise in every log.
  '/favicon.ico': { file: 'favicon.svg', type: 'image/svg+xml' },
  ...Object.fromEntries(
    MODULES.map((m) => [`/ui/${m}`, { file: m, type: 'text/javascript; charset=utf-8' }]),
  ),
}

// The paths the token guard lets through without the token (GET only).
export const PAGE_PATHS: ReadonlySet<string> = new Set(Object.keys(FILES))

// Only this server's own scripts, styles, images (blob: for attachments, which the page fetches
// with its token and shows from memory) and connections; never inside another page's
// frame (the interrupt button must not be clickjacked).
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

export function mountPage(app: Hono, dir: string = PAGE_DIR): void {
  for (const [path, { file, type }] of Object.entries(FILES)) {
    // Read once: the page is part of the installed package, not something edited live.
    let body: string | undefined
    app.get(path, (c: Context) => {
      body ??= readFileSync(join(dir, file), 'utf8')
      return c.body(body, 200, {
        'Content-Type': type,
        'Content-Security-Policy': CSP,
        'X-Frame-Options': 'DENY',
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        'Cache-Control': 'no-cache',
      })
    })
  }
}
