// The structural index through the real tree-sitter runtime and grammar packages: skeletons
// whose anchors are cat's and which patch accepts, directory summaries, and the bounds.
import assert from 'node:assert/strict'
import { readFile, rename, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { catTool } from '../../src/tools/fs/cat.js'
import { patchTool } from '../../src/tools/fs/patch.js'
import { PathGuard } from '../../src/tools/fs/paths.js'
import { indexTool, setIndexTimeoutsForTest } from '../../src/tools/outline/index-tool.js'
import { setCheckUseHook } from '../../src/util/check-use-hook.js'
import { call, context, files, guardFor, type Obj, rejection, tempDir } from './helpers.js'

after(() => setIndexTimeoutsForTest(undefined))

const PY = `import os


@cached
def load(path: str, *, strict=False) -> dict:
    return {}


class Store(Base):
    """Keeps things."""

    def __init__(self, root):
        self.root = root

    @property
    def size(self) -> int:
        return 0


if __name__ == "__main__":
    load("x")
`

async function setup(tree: Record<string, string> = {}) {
  const ws = await tempDir('vis-index-')
  await files(ws, { 'app.py': PY, ...tree })
  const guard = guardFor([ws])
  return { ws, guard, index: indexTool(guard), cat: catTool(guard), ctx: context([ws]) }
}

// The anchor cat prints for each line of a file, by line number.
async function catAnchors(cat: ReturnType<typeof catTool>, ctx: ReturnType<typeof context>, path: string) {
  const r = await call(cat, ctx, path)
  return r.content.split('\n').map((row: string) => row.slice(0, row.indexOf('|')))
}

const rows = (r: Obj) => r.definitions.map((d: Obj) => `${'  '.repeat(d.depth)}${d.kind} ${d.name}`)

test('index(path) gives a Python skeleton: one line per definition, nested, with cat anchors', async () => {
  const { index, cat, ctx } = await setup()
  const r = await call(index, ctx, 'app.py')
  assert.equal(r.type, 'file')
  assert.equal(r.language, 'python')
  assert.equal(r.truncated, false)
  assert.equal(r.total_lines, 21)
  const a = await catAnchors(cat, ctx, 'app.py')
  assert.equal(
    r.skeleton,
    [
      `def load  (path: str, *, strict=False) -> dict  @${a[3]}..${a[5]}`,
      `class Store  (Base)  @${a[8]}..${a[16]}`,
      `  def __init__  (self, root)  @${a[11]}..${a[12]}`,
      `  def size  (self) -> int  @${a[14]}..${a[16]}`,
    ].join('\n'),
  )
  // The decorator belongs to the definition: its first anchor is the `@cached` line.
  assert.equal(r.definitions[0].start, 4)
  assert.equal(r.definitions[0].from, a[3])
})

test('a whole definition is replaced through patch with the anchors index gave, without cat', async () => {
  const { ws, guard, index, ctx } = await setup()
  const size = (await call(index, ctx, 'app.py')).definitions.find((d: Obj) => d.name === 'size')
  const patch = patchTool(guard)
  await call(patch, ctx, [
    {
      path: 'app.py',
      from_anchor: size.from,
      to_anchor: size.to,
      replace: '    def size(self) -> int:\n        return len(self.root)',
    },
  ])
  const text = await readFile(join(ws, 'app.py'), 'utf8')
  assert.equal(
    text,
    PY.replace(
      '    @property\n    def size(self) -> int:\n        return 0',
      '    def size(self) -> int:\n        return len(self.root)',
    ),
  )
  // The skeleton follows the edit.
  const again = await call(index, ctx, 'app.py')
  assert.deepEqual(rows(again), ['def load', 'class Store', '  def __init__', '  def size'])
  assert.equal(again.definitions[3].start, 15)
})

// One small file per language the issue names, and what its skeleton must list.
const SOURCES: Record<string, { text: string; rows: string[] }> = {
  'src/a.ts': {
    text: `export function f(a: number): string {
  return String(a)
}
export const g = async (x: string) => x
const n = 1
export default class K<T> extends Base {
  private m(y: T): void {}
}
interface I { a: number }
type T = { b: string }
enum E { A }
namespace NS {
  export function h() {}
}
`,
    rows: [
      'function f',
      'function g',
      'class K',
      '  method m',
      'interface I',
      'type T',
      'enum E',
      'namespace NS',
      '  function h',
    ],
  },
  'src/b.tsx': {
    text: `export function View(p: Props) {
  return <div>{p.x}</div>
}
export const Row = () => <span />
`,
    rows: ['function View', 'function Row'],
  },
  'src/c.js': {
    text: `function j(a) {}
class X {
  y() {}
}
module.exports = { j }
`,
    rows: ['function j', 'class X', '  method y'],
  },
  'src/d.go': {
    text: `package main

type Server struct {
\taddr string
}

func (s *Server) Close() error {
\treturn nil
}

func main() {}
`,
    rows: ['struct Server', 'method Server.Close', 'func main'],
  },
  'src/e.rs': {
    text: `#[derive(Debug)]
pub struct P {
    x: i32,
}

impl Display for P {
    fn fmt(&self) -> Result {
        Ok(())
    }
}

pub trait Tr {
    fn a(&self) -> i32;
}
`,
    rows: ['struct P', 'impl Display for P', '  fn fmt', 'trait Tr', '  fn a'],
  },
  'src/F.java': {
    text: `public class F {
    public F() {}

    @Override
    public String toString() {
        return "";
    }
}
`,
    rows: ['class F', '  constructor F', '  method toString'],
  },
  'src/g.c': {
    text: `#include <stdio.h>
struct pt {
  int x;
};
int add(int a, int b);
static int *mul(int a, int b) {
  return 0;
}
`,
    rows: ['struct pt', 'function add', 'function mul'],
  },
  'src/h.cpp': {
    text: `namespace ns {
class A {
 public:
  int n() { return 1; }
};
template <typename T>
T id(T x) { return x; }
}
`,
    rows: ['namespace ns', '  class A', '    function n', '  function id'],
  },
}

test('index reads TypeScript, TSX, JavaScript, Go, Rust, Java, C and C++, anchors and all', async () => {
  const tree = Object.fromEntries(Object.entries(SOURCES).map(([p, s]) => [p, s.text]))
  const { index, cat, ctx } = await setup(tree)
  for (const [path, want] of Object.entries(SOURCES)) {
    const r = await call(index, ctx, path)
    assert.deepEqual(rows(r), want.rows, path)
    const a = await catAnchors(cat, ctx, path)
    for (const d of r.definitions) {
      assert.equal(d.from, a[d.start - 1], `${path} ${d.name} first anchor`)
      assert.equal(d.to, a[d.end - 1], `${path} ${d.name} last anchor`)
      assert.ok(r.skeleton.includes(`@${d.from}..${d.to}`), `${path} ${d.name} in the skeleton`)
    }
  }
  const rs = await call(index, ctx, 'src/e.rs')
  // `#[derive]` is part of the struct; the signature is what follows the name.
  assert.equal(rs.definitions[0].start, 1)
  assert.equal(rs.definitions[2].signature, '(&self) -> Result')
  const go = await call(index, ctx, 'src/d.go')
  assert.equal(go.definitions[1].signature, '() error')
  const c = await call(index, ctx, 'src/g.c')
  assert.equal(c.definitions[2].signature, '(int a, int b)')
})

test('index(dir) lists source files with their top-level definitions, as the walk rules say', async () => {
  const outside = await tempDir('vis-index-outside-')
  await files(outside, { 'secret.py': 'def leaked():\n    pass\n' })
  const { ws, index, ctx } = await setup({
    'pkg/mod.py': 'class M:\n    def inner(self):\n        pass\n\ndef top():\n    pass\n',
    'pkg/notes.txt': 'def not_code(): pass\n',
    'pkg/gen/out.py': 'def generated(): pass\n',
    'pkg/.hidden/h.py': 'def hidden(): pass\n',
    '.gitignore': 'pkg/gen/\n',
  })
  await writeFile(join(ws, '.git'), 'gitdir: nowhere\n')
  await symlink(join(outside, 'secret.py'), join(ws, 'pkg', 'link.py'))
  const r = await call(index, ctx, '.')
  assert.equal(r.type, 'directory')
  assert.deepEqual(
    r.files.map((f: Obj) => f.path),
    ['app.py', 'pkg/mod.py'],
  )
  assert.match(
    r.skeleton,
    /^app\.py\n {2}def load {2}\(path: str, \*, strict=False\) -> dict {2}@4:[0-9a-f]{6}\.\.6:[0-9a-f]{6}\n/,
  )
  // Top-level only: the method stays out of the summary.
  assert.match(
    r.skeleton,
    /pkg\/mod\.py\n {2}class M {2}@1:[0-9a-f]{6}\.\.3:[0-9a-f]{6}\n {2}def top {2}\(\) {2}@5:/,
  )
  assert.doesNotMatch(r.skeleton, /inner|generated|hidden|leaked|not_code/)
  assert.equal(r.truncated, false)
  const one = await call(index, ctx, '.', { limit: 1 })
  assert.deepEqual(
    one.files.map((f: Obj) => f.path),
    ['app.py'],
  )
  assert.equal(one.truncated, true)
})

test('a file whose grammar is not installed is refused with the package that adds it', async () => {
  // tree-sitter-ruby is known to the index but not among the package's optional dependencies.
  const { index, ctx } = await setup({ 'lib/tool.rb': 'def run\nend\n' })
  const err = await rejection(call(index, ctx, 'lib/tool.rb'))
  assert.equal(err.code, 'tool.no-grammar')
  assert.match(
    err.message,
    /'tree-sitter-ruby' is not installed.*npm install --save-optional tree-sitter-ruby/,
  )
  assert.equal(err.context.package, 'tree-sitter-ruby')
  const dir = await call(index, ctx, '.')
  assert.deepEqual(dir.missing_grammars, [
    { package: 'tree-sitter-ruby', files: 1, install: 'npm install --save-optional tree-sitter-ruby' },
  ])
  assert.deepEqual(
    dir.files.map((f: Obj) => f.path),
    ['app.py'],
  )
})

test('index refuses what it cannot read: other file types, oversized files, paths outside the roots', async () => {
  const { ws, index, ctx } = await setup({ 'README.md': '# hi\n' })
  const other = await rejection(call(index, ctx, 'README.md'))
  assert.equal(other.code, 'tool.unsupported-language')
  assert.match(other.message, /'README\.md' is not a source file.*\.py .*use cat or grep/)
  await writeFile(join(ws, 'big.py'), `x = 1\n${'# pad\n'.repeat(400_000)}`)
  const big = await rejection(call(index, ctx, 'big.py'))
  assert.equal(big.code, 'tool.too-large')
  assert.match(big.message, /limit of the index; use grep/)
  const outside = await tempDir('vis-index-out-')
  await files(outside, { 'x.py': 'def x(): pass\n' })
  const denied = await rejection(call(index, ctx, join(outside, 'x.py')))
  assert.equal(denied.code, 'tool.path-denied')
  const hiddenGuard = new PathGuard([ws], 'test-session', [join(ws, 'ext')])
  await files(ws, { 'ext/e.py': 'def e(): pass\n' })
  const masked = await rejection(call(indexTool(hiddenGuard), ctx, 'ext/e.py'))
  assert.equal(masked.code, 'tool.path-denied')
})

test('a parse past its deadline stops with tool.index-timeout, and the next call parses again', async () => {
  const body = Array.from({ length: 1000 }, (_, i) => `def f${i}(a, b):\n    return a + b\n`).join('')
  const { index, ctx } = await setup({ 'many.py': body })
  setIndexTimeoutsForTest({ file: 0, tree: 0 })
  try {
    const err = await rejection(call(index, ctx, 'many.py'))
    assert.equal(err.code, 'tool.index-timeout')
    assert.match(err.message, /took longer than 0 ms and was stopped; use grep/)
    const dir = await call(index, ctx, '.')
    assert.equal(dir.truncated, true)
    assert.equal(dir.files.length, 0)
  } finally {
    setIndexTimeoutsForTest(undefined)
  }
  const r = await call(index, ctx, 'many.py')
  assert.equal(r.truncated, false)
  assert.equal(r.definitions.length, 1000)
  assert.equal(r.definitions[999].name, 'f999')
  assert.equal(r.definitions[999].start, 1999)
})

test('a skeleton longer than the output bound is cut and says so', async () => {
  const body = Array.from({ length: 4000 }, (_, i) => `def function_number_${i}(a, b):\n    return a\n`).join(
    '',
  )
  const { index, ctx } = await setup({ 'long.py': body })
  const r = await call(index, ctx, 'long.py')
  assert.equal(r.truncated, true)
  assert.ok(r.skeleton.length <= 64 * 1024)
  assert.equal(r.definitions.length, r.skeleton.split('\n').length)
  assert.ok(r.definitions.length > 1000 && r.definitions.length < 4000)
})

test('index(dir): a directory swapped for a link to outside the roots after the walk is not read', async () => {
  const outside = await tempDir('vis-index-secret-')
  await files(outside, { 'mod.py': 'def leaked_secret():\n    pass\n' })
  const { ws, index, ctx } = await setup({ 'pkg/mod.py': 'def inside():\n    pass\n' })
  let swapped = false
  // The walk has listed pkg/mod.py; the swap lands between that and the read, every time.
  setCheckUseHook(async (point, abs) => {
    if (point !== 'index.read' || swapped || !abs.endsWith(join('pkg', 'mod.py'))) return
    await rename(join(ws, 'pkg'), join(ws, 'pkg.old'))
    await symlink(outside, join(ws, 'pkg'))
    swapped = true
  })
  try {
    const r = await call(index, ctx, '.')
    assert.ok(swapped)
    assert.doesNotMatch(JSON.stringify(r), /leaked_secret/)
    assert.deepEqual(
      r.files.map((f: Obj) => f.path),
      ['app.py'],
    )
    assert.deepEqual(r.skipped, [{ path: 'pkg/mod.py', reason: 'not readable beneath the directory' }])
  } finally {
    setCheckUseHook(undefined)
  }
})

test("a long parse runs beside the host's event loop, not in it", async () => {
  const body = Array.from(
    { length: 9000 },
    (_, i) => `def f${i}(a, b=1, *c, **d) -> int:\n    return a + b\n`,
  )
  const { index, ctx } = await setup({ 'slow.py': body.join('') })
  await call(index, ctx, 'app.py')
  // The longest pause of a 5 ms timer while the call runs: a parse in the event loop is one
  // synchronous stretch as long as the call itself.
  let last = performance.now()
  let gap = 0
  const tick = setInterval(() => {
    const now = performance.now()
    gap = Math.max(gap, now - last)
    last = now
  }, 5)
  const t0 = performance.now()
  try {
    const r = await call(index, ctx, 'slow.py')
    assert.equal(r.definitions[0].name, 'f0')
  } finally {
    clearInterval(tick)
  }
  const took = performance.now() - t0
  assert.ok(took > 100, `the parse took ${took} ms`)
  assert.ok(gap < took / 2, `the event loop stood still ${gap.toFixed(0)} ms of a ${took.toFixed(0)} ms call`)
})

// Issue 30 (fourth pass): a Python file with ~1,400 nested definitions lost its OUTER ones: the
// grammar's scanner keeps at most ~500 indentation levels (its state buffer), past which the whole
// file parsed as one ERROR node and only the innermost definitions were listed. Lines nested past
// Python's own limit (100 levels) are elided before parsing, with a note; the outer ones stay.
test('index keeps the outer definitions of a deeply nested file; lines past 100 levels are elided with a note', async () => {
  const n = 1400
  let deep = ''
  for (let i = 0; i < n; i++) deep += `${' '.repeat(i)}def f${i}():\n`
  deep += `${' '.repeat(n)}pass\n\n\nclass Tail:\n    def after(self):\n        pass\n`
  let fine = ''
  for (let i = 0; i < 100; i++) fine += `${'  '.repeat(i)}class C${i}:\n`
  fine += `${'  '.repeat(100)}pass\n`
  const { index, cat, ctx } = await setup({ 'deep.py': deep, 'fine.py': fine })
  const r = await call(index, ctx, 'deep.py')
  assert.deepEqual(rows(r), ['def f0', 'class Tail', '  def after'])
  const [f0, tail] = r.definitions
  assert.equal(f0.start, 1)
  assert.equal(f0.end, n + 1)
  assert.equal(tail.start, n + 4)
  const anchors = await catAnchors(cat, ctx, 'deep.py')
  assert.equal(f0.from, anchors[0])
  assert.deepEqual(r.elided, { first: 102, last: n + 1, lines: n - 100 })
  assert.match(
    r.skeleton,
    /\n# lines 102\.\.1401 \(1300 lines\) nest deeper than 100 levels, which Python refuses: not indexed$/,
  )
  // A directory's summary keeps the file's top-level definitions, with the same note.
  const d = await call(index, ctx, '.')
  assert.match(d.skeleton, /deep\.py\n {2}def f0 .*\n {2}class Tail .*\n {2}# lines 102\.\.1401 /)
  // The control: 100 levels, Python's own limit, are indexed whole and nothing is elided.
  const f = await call(index, ctx, 'fine.py')
  assert.equal(f.elided, undefined)
  assert.equal(f.definitions[0].name, 'C0')
  assert.equal(f.definitions.length, 9, 'classes nest to the index depth (8)')
})
