// The process surface, attachments, and the seed's guest-side helpers.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Guest, SHELL_OFF, SHELL_ON, startGuest } from './harness.js'

let on: Guest
let off: Guest
before(async () => {
  ;[on, off] = await Promise.all([
    startGuest({
      tools: {
        shell: { fn: (cmd: string) => `ran ${cmd}`, doc: 'Run a shell command.', signature: '(cmd)' },
      },
    }),
    startGuest(),
  ])
})
after(async () => {
  await Promise.all([on.close(), off.close()])
})

const doors = [
  'import subprocess\nsubprocess.run(["ls"])',
  'import subprocess\nsubprocess.Popen("ls")',
  'import subprocess\nsubprocess.check_output("ls")',
  'os.system("ls")',
  'os.popen("ls")',
  'os.execv("/bin/ls", ["ls"])',
  'import asyncio\nasync def m():\n    await asyncio.create_subprocess_exec("ls")\nasyncio.run(m())',
  'import asyncio\nasync def m():\n    await asyncio.create_subprocess_shell("ls")\nasyncio.run(m())',
]

describe('process surface', () => {
  for (const code of doors) {
    test(`with the shell tool on: ${code.split('\n').at(-1)}`, async () => {
      const out = await on.runBlock(code)
      assert.equal(out.error?.phase, 'runtime')
      assert.ok(out.error.message.includes(SHELL_ON), out.error.message)
      assert.ok(out.error.flags?.includes('sandbox'))
    })
  }
  test('with the shell tool off, every door gives the closed text', async () => {
    for (const code of doors) {
      const out = await off.runBlock(code)
      assert.ok(out.error?.message.includes(SHELL_OFF), out.error?.message)
    }
  })
  test('a refusal is catchable as PermissionError', async () => {
    const out = await on.runBlock(
      'try:\n    os.system("ls")\nexcept PermissionError as e:\n    print("refused")',
    )
    assert.equal(out.stdout, 'refused\n')
  })
  test("doc('shell') answers the same instead of silence when the tool is off", async () => {
    assert.equal((await off.runBlock('doc("shell")')).result, SHELL_OFF)
    assert.match(
      String((await on.runBlock('doc("shell")')).result),
      /^shell\(cmd\)[\s\S]*Run a shell command\./,
    )
  })
  test('the shell tool itself still runs', async () => {
    assert.equal((await on.runBlock('await shell("ls")')).result, 'ran ls')
  })
  test('asyncio servers refuse with a reason', async () => {
    const out = await off.runBlock(
      'import asyncio\nasync def m():\n    await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)\nasyncio.run(m())',
    )
    assert.match(out.error?.message ?? '', /serving sockets from a block is refused.*apropos\('serve'\)/)
  })
})

describe('attachments', () => {
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')
  test('vis_attach reads a file and sniffs its media type from magic bytes', async () => {
    const out = await off.runBlock(
      `p = Path(VIS_OUTBOX).parent / "plot.dat"\np.write_bytes(bytes.fromhex("${png.toString('hex')}"))\nvis_attach(p)\nprint("done")`,
    )
    assert.equal(out.stdout, 'done\n')
    assert.deepEqual(out.attachments, [
      { name: 'plot.dat', media_type: 'image/png', size: png.length, data_b64: png.toString('base64') },
    ])
  })
  test('vis_attach_bytes falls back to the extension, then to text', async () => {
    const out = await off.runBlock(
      'vis_attach_bytes(b"a,b\\n1,2\\n", "t.csv")\nvis_attach_bytes("plain words", "notes")',
    )
    assert.deepEqual(
      out.attachments?.map((a) => [
        a.name,
        a.media_type,
        a.size,
        Buffer.from(a.data_b64 ?? '', 'base64').toString(),
      ]),
      [
        ['t.csv', 'text/csv', 8, 'a,b\n1,2\n'],
        ['notes', 'text/plain', 11, 'plain words'],
      ],
    )
  })
  test('attachments ride along with an error too', async () => {
    const out = await off.runBlock('vis_attach_bytes(b"%PDF-1.4", "r.pdf")\nraise ValueError("late")')
    assert.equal(out.error?.phase, 'runtime')
    assert.equal(out.attachments?.[0]?.media_type, 'application/pdf')
  })
  test('a file closed inside VIS_OUTBOX is attached once; a still-open one waits until closed', async () => {
    const out = await off.runBlock(
      'import os\nwith open(os.path.join(os.environ["VIS_OUTBOX"], "out.json"), "w") as f:\n    f.write("{}")\nkeep = open(os.path.join(VIS_OUTBOX, "later.txt"), "w")\nkeep.write("x")',
    )
    assert.deepEqual(out.attachments, [
      { name: 'out.json', media_type: 'application/json', size: 2, path: `${off.outbox}/out.json` },
    ])
    const next = await off.runBlock('keep.close()')
    assert.deepEqual(
      next.attachments?.map((a) => [a.name, a.size]),
      [['later.txt', 1]],
    )
    assert.equal((await off.runBlock('1')).attachments, undefined)
  })
  test('a missing file is an error the model can read', async () => {
    const out = await off.runBlock('vis_attach(Path(VIS_OUTBOX).parent / "missing.png")')
    assert.match(out.error?.message ?? '', /FileNotFoundError/)
  })
})

describe('seed helpers on the guest side', () => {
  test('count_top_level_forms counts statements; unparseable code throws its SyntaxError', async () => {
    assert.equal(await off.call('count_top_level_forms', 'import os\nx = 1\nif x:\n    y = 2\n# c\n'), 3)
    assert.equal(await off.call('count_top_level_forms', '# only a comment'), 0)
    await assert.rejects(off.call('count_top_level_forms', 'x = (1,'), (e: Error & { type?: string }) => {
      assert.equal(e.type, 'SyntaxError')
      return true
    })
  })
  test('validate_no_banned_defs refuses runtime tampering, not exec/eval', async () => {
    for (const code of [
      'import _vis',
      'from vis_guest import api',
      'x = __vis_settle__',
      'import sys\nsys.addaudithook(print)',
    ]) {
      const r = await off.call<{ message: string; line: number } | null>('validate_no_banned_defs', code)
      assert.ok(r, code)
      assert.match(r.message, /refused: it tampers with the runtime/)
    }
    assert.equal(await off.call('validate_no_banned_defs', 'exec("x = 1")\neval("1 + 1")\nimport os'), null)
  })
  test('run_block refuses a banned reference before anything runs', async () => {
    const out = await off.runBlock('print("ran")\nimport _vis')
    assert.equal(out.stdout, undefined)
    assert.equal(out.error?.line, 2)
    assert.ok(out.error?.flags?.includes('banned'))
  })
})
