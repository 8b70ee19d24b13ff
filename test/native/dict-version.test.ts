// _vis.dict_version (dict_version.cc): the guest runtime skips comparing the builtins and
// recomputing the defs snapshot while it says a dict is untouched, so it must change on
// every kind of modification, per dict, on every minor (ma_version_tag on 3.11, a dict
// watcher on 3.12+).
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { loadPython, type PythonRuntime } from '../../src/native/index.js'
import { tempHome } from './helpers.js'

tempHome()
let rt: PythonRuntime

before(async () => {
  rt = await loadPython()
})

async function value(expr: string): Promise<unknown> {
  const r = await rt.eval(expr)
  assert.ok(r.ok, JSON.stringify(r))
  return r.value
}

test('the version changes on every modification and only then', async () => {
  // step(change) makes the change and answers whether d's version moved.
  const setup = await rt.exec(`import _vis
d, other = {"a": 1}, {}
seen = [_vis.dict_version(d)]
def step(change):
    change()
    seen.append(_vis.dict_version(d))
    return seen[-1] != seen[-2]`)
  assert.ok(setup.ok, JSON.stringify(setup))
  const a = 'd["a"]'
  const changes: Array<[string, boolean]> = [
    ['lambda: None', false],
    [`lambda: d.__setitem__("a", ${a})`, false], // the very object it holds: no change
    ['lambda: other.__setitem__("x", 1)', false], // another dict
    ['lambda: d.__setitem__("a", 2)', true],
    ['lambda: d.__setitem__("b", 3)', true],
    ['lambda: d.__delitem__("b")', true],
    ['lambda: d.update(c=4)', true],
    ['lambda: d.setdefault("e", 5)', true],
    ['lambda: d.pop("e")', true],
    ['lambda: d.popitem()', true],
    ['lambda: d.clear()', true],
    ['lambda: exec("g = 1", d)', true], // a namespace written by executing code in it
  ]
  for (const [change, changed] of changes) {
    assert.equal(await value(`step(${change})`), changed, change)
  }
  assert.equal(await value('isinstance(_vis.dict_version(__import__("builtins").__dict__), int)'), true)
})

test('anything but a dict is refused', async () => {
  const r = await rt.eval('_vis.dict_version([])')
  assert.equal(r.ok, false)
  assert.match(JSON.stringify(r), /TypeError.*dict_version\(\) takes a dict/)
})
