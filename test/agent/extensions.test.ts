// The prompt carries the trusted extensions' tools (as the model calls them) and their prompt
// fragments, after the project instructions; a real extension worker serves the tool.
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadAgentConfig } from '../../src/agent/config.js'
import { agentFor } from '../../src/agent/index.js'
import { createEngine } from '../../src/engine/index.js'
import { extension, tempLayout, write } from '../extensions/helpers.js'
import { ProviderDouble, pyCall } from './double.js'
import { python } from './harness.js'

test('extension tools and prompt fragments reach the model, after the project instructions', async () => {
  const { home, project, global } = tempLayout('agent-ext')
  write(
    join(global, 'notes.py'),
    extension(
      'notes',
      'def shout(text):\n    """Return text in capitals."""\n    return text.upper()\n',
      ', tools=[shout], prompt="Always shout greetings with the notes tool."',
    ),
  )
  mkdirSync(join(project, 'src'), { recursive: true })
  writeFileSync(join(project, 'AGENTS.md'), 'PROJECT-RULES')
  const double = await new ProviderDouble().start()
  const engine = await createEngine({ home, python, pool: { size: 0 }, project })
  try {
    const config = loadAgentConfig({
      home,
      overrides: { model: 'openai/m', providers: { openai: { baseURL: double.openaiURL, apiKey: 'x' } } },
    })
    const s = await engine.createSession({ roots: [join(project, 'src')] })
    const tool = engine.listExtensions().extensions[0]!.tools[0]!
    const name = tool.slice(0, tool.indexOf('('))
    double.script([
      { calls: [pyCall(`print(await ${name}("hello"))`)] },
      (req) => ({ text: req.body.messages.at(-1).content }),
    ])
    const r = await agentFor(engine, config).session(s.id).turn('greet')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'HELLO\n')
    const system: string = double.requests[0]!.body.messages[0].content
    assert.match(system, new RegExp(`## ${name}\\(text\\)\\nReturn text in capitals\\.`))
    const rules = system.indexOf('PROJECT-RULES')
    const fragment = system.indexOf(
      '# From the notes extension\n\nAlways shout greetings with the notes tool.',
    )
    assert.ok(rules > 0 && fragment > rules, 'the fragment follows the project instructions')
  } finally {
    await engine.close()
    await double.close()
  }
})
