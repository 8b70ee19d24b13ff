// index() as the model calls it: from a block in a real jailed worker, its anchors fed
// straight into patch() in the same block, and its refusal as a Python exception with a code.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { files, tempDir } from './helpers.js'

const python = process.env.VIS_PYTHON_VERSION
let rt: Runtime

before(async () => {
  rt = await createRuntime({ home: await tempDir('vis-index-home-'), python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
})

test('a block indexes a file and replaces a whole method with the anchors, never reading the file', async () => {
  const ws = await tempDir()
  await files(ws, {
    'svc/store.py':
      'class Store:\n    def get(self, k):\n        return None\n\n    def put(self, k, v):\n        pass\n',
    'lib/tool.rb': 'def run\nend\n',
  })
  const s = await rt.createSession({ roots: [ws] })
  const code = `import json
sk = await index("svc/store.py")
get = next(d for d in sk["definitions"] if d["name"] == "get")
await patch([{"path": "svc/store.py", "from_anchor": get["from"], "to_anchor": get["to"],
              "replace": "    def get(self, k):\\n        return self.data.get(k)"}])
tree = await index("svc")
try:
    await index("lib/tool.rb")
    refused = None
except Exception as e:
    refused = {"code": getattr(e, "code", None), "message": str(e)}
print(json.dumps({"skeleton": sk["skeleton"], "tree": tree["skeleton"], "refused": refused}))`
  const r = await s.runBlock(code, { timeoutMs: 120_000 })
  assert.equal(r.error, undefined, JSON.stringify(r.error))
  const out = JSON.parse((r.stdout ?? '').trim().split('\n').pop()!)
  assert.match(
    out.skeleton,
    /^class Store {2}@1:[0-9a-f]{6}\.\.6:[0-9a-f]{6}\n {2}def get {2}\(self, k\) {2}@2:/,
  )
  assert.equal(
    await readFile(join(ws, 'svc/store.py'), 'utf8'),
    'class Store:\n    def get(self, k):\n        return self.data.get(k)\n\n    def put(self, k, v):\n        pass\n',
  )
  assert.match(out.tree, /^svc\/store\.py\n {2}class Store {2}@1:/)
  assert.equal(out.refused.code, 'tool.no-grammar')
  assert.match(out.refused.message, /npm install --save-optional tree-sitter-ruby/)
})
