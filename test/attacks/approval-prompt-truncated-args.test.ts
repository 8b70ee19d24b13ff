// ATTACK (the person's approval, which read-only and review modes lean on for every tool that
// acts outside the jail, and which approvals.rules asks for, e.g. {"tool": "shell", "match":
// "rm |git push"}): `vis run`/`vis chat` ask on the terminal with
// `? <tool>(<args>) needs approval (<reason>)`, where the args are cut to their first 300
// characters (src/cli/agent/ask.ts `argsText`). The guest chooses the arguments and their order
// (keyword arguments keep the order it wrote them in): it puts 300 harmless characters first
// and the part that matters last, so the person approves a call whose dangerous part, the very
// part the rule matched, was never shown ("…"). Here `shell('echo <400 chars>; rm -rf
// important')` matches the rule `rm `; the prompt shows only the echo. (The same for an MCP or
// extension tool in a read-only/review session: `write_file(content='<300 chars>',
// path='/home/me/.bashrc')` shows only the content.) A prompt for approval must show the whole
// call, or at least the part that needs approving, never a prefix chosen by the guest.
//
// Reproduction: approvals.rules = [{tool: 'shell', match: 'rm '}]; the model's block calls the
// shell as above; the terminal prompt (approvalPrompter) does not contain "rm -rf".
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { approvalPrompter } from '../../src/cli/agent/ask.js'
import { pyCall } from '../agent/double.js'
import { harness } from '../agent/harness.js'

test('the approval prompt shows the part of the call that needs approving', async () => {
  const h = await harness({
    shell: true,
    config: { approvals: { auto: 'ask', timeoutMs: 60_000, rules: [{ tool: 'shell', match: 'rm ' }] } },
  })
  try {
    const out = new PassThrough()
    let shown = ''
    out.on('data', (b) => {
      shown += String(b)
    })
    const person = { next: async (_prompt: string) => 'n' }
    h.agent.subscribe(h.sessionId, approvalPrompter(h.agent, person as never, out))
    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      if (b.includes('SHELL-' + 'ASKED')) return { text: 'done' }
      return {
        calls: [
          pyCall(
            "try:\n    await shell('echo ' + 'a' * 400 + '; rm -rf important')\nexcept Exception as e:\n    print(getattr(e, 'code', None))\nprint('SHELL-' + 'ASKED')",
          ),
        ],
      }
    })
    const r = await h.agent.turn(h.sessionId, 'TASK')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.match(shown, /needs approval/, `no approval was asked: ${shown}`)
    assert.match(
      shown,
      /rm -rf important/,
      `the person was asked to approve without seeing the matched part:\n${shown}`,
    )
    // Whole, with its length, and the call was denied by the person's answer.
    assert.match(shown, /\[arguments: \d+ characters, shown whole\]/)
    assert.match(shown, /'a{400}; rm -rf important'|"echo a{400}; rm -rf important"/)
    assert.match(shown, /denied/)
  } finally {
    await h.close()
  }
})
