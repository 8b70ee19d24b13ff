// The MCP Inspector's CLI mode (@modelcontextprotocol/inspector-cli, a devDependency) against
// `vis mcp` over stdio: a third-party client that lists vis's tools and calls one.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { childEnv, cliScript, repoRoot, tempDir } from './helpers.js'

const inspectorCli = join(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json'),
  '..',
  'build',
  'cli.js',
)

const execFileP = promisify(execFile)

// Exits non-zero (and so rejects, with its stderr) when the inspector fails.
async function inspector(args: string[]): Promise<string> {
  const home = tempDir('inspector-home')
  const root = tempDir('inspector-root')
  const vis = [process.execPath, '--import', 'tsx', cliScript, 'mcp', '--root', root, '--pool', '0']
  const r = await execFileP(
    process.execPath,
    [inspectorCli, '--cli', '-e', `VIS_HOME=${home}`, ...vis, ...args],
    {
      cwd: repoRoot,
      env: childEnv({}),
    },
  )
  return r.stdout
}

test('the MCP Inspector CLI lists vis tools and runs a block', async () => {
  const list = await inspector(['--method', 'tools/list'])
  const names = (JSON.parse(list) as { tools: { name: string }[] }).tools.map((t) => t.name)
  assert.deepEqual(names, [
    'python_execution',
    'python_interrupt',
    'session_reset',
    'cat',
    'ls',
    'grep',
    'patch',
  ])
  const call = await inspector([
    '--method',
    'tools/call',
    '--tool-name',
    'python_execution',
    '--tool-arg',
    'code=print(6 * 7)',
  ])
  const result = JSON.parse(call) as { content: { type: string; text: string }[]; isError: boolean }
  assert.deepEqual(result.content, [{ type: 'text', text: '42' }])
  assert.equal(result.isError, false)
})
