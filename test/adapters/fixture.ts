// What the adapter tests share: a real runtime session (a CPython worker in the jail) and the
// provider double, with helpers to read what the double was sent.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { ProviderDouble } from '../agent/double.js'

export const python = process.env.VIS_PYTHON_VERSION

export type Fixture = { rt: Runtime; double: ProviderDouble; root: string; close(): Promise<void> }

export async function fixture(): Promise<Fixture> {
  const home = mkdtempSync(join(tmpdir(), 'vis-adapter-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-adapter-root-'))
  const double = await new ProviderDouble().start()
  const rt = await createRuntime({ home, python, pool: { size: 0 } })
  return {
    rt,
    double,
    root,
    async close() {
      await rt.close()
      await double.close()
    },
  }
}

export const session = (f: Fixture): Promise<Session> => f.rt.createSession({ roots: [f.root] })

// Waits for the session's block to print `marker` (the block is running, past its start).
export function printed(s: Session, marker: string): Promise<void> {
  return new Promise((resolve) => {
    let seen = ''
    const off = s.events.on('output', (ev) => {
      seen += ev.data
      if (seen.includes(marker)) {
        off()
        resolve()
      }
    })
  })
}

// The tool results a Chat Completions request carried, in order.
export const chatToolResults = (body: any): string[] =>
  body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content)

// The function-call outputs a Responses request carried, in order.
export const responsesToolResults = (body: any): unknown[] =>
  body.input.filter((i: any) => i.type === 'function_call_output').map((i: any) => i.output)

// The Python of a tool call the double sends.
export const code = (src: string): string => JSON.stringify({ code: src })
