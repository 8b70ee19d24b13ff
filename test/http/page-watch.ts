import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'

// What a page test holds the page to: nothing in the console at error level, no uncaught
// exception, no request answered 4xx/5xx (a missing /favicon.ico would be one), unless the test
// provoked it and says so.
export function watchPage(page: Page) {
  const problems: string[] = []
  const expected = new Set<string>()
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`)
  })
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`))
  page.on('response', (r) => {
    const path = new URL(r.url()).pathname
    if (r.status() >= 400 && !expected.has(`${r.status()} ${path}`)) problems.push(`${r.status()} ${path}`)
  })
  return {
    problems,
    // A refusal the test asks for (`409 /v1/sessions/x/draft/apply`, or `aborted <path>` for a
    // request the test made fail): not a problem.
    expect: (status: number, path: string) => expected.add(`${status} ${path}`),
    expectAborted: (path: string) => expected.add(`aborted ${path}`),
    // A provoked refusal still logs "Failed to load resource" at error level: those lines only.
    unexpected: () =>
      problems.filter(
        (p) =>
          ![...expected].some(
            (e) =>
              p.startsWith('console: Failed to load resource') &&
              (p.includes(`status of ${e.split(' ')[0]}`) ||
                (e.startsWith('aborted ') && p.includes('net::ERR_FAILED'))),
          ),
      ),
  }
}

// Screenshots go to a git-ignored folder at the repository's top (printed, so a person can look).
export const ARTEFACTS = join(import.meta.dirname, '..', '..', 'artefacts', 'page')

export async function screenshots(page: Page, name: string, widths = [420, 800, 1280]): Promise<string[]> {
  mkdirSync(ARTEFACTS, { recursive: true })
  const files: string[] = []
  const before = page.viewportSize()
  for (const width of widths) {
    await page.setViewportSize({ width, height: 900 })
    const file = join(ARTEFACTS, `${name}-${width}.png`)
    await page.screenshot({ path: file, fullPage: false })
    files.push(file)
  }
  if (before) await page.setViewportSize(before)
  console.log(`page screenshots: ${files.join(', ')}`)
  return files
}
