// Each staged package used the way a model writes it, inside a confined session (the OS
// jail, the audit hook): HTTP through the egress path, files only under the roots,
// pictures back as attachments, no process and no foreign code.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { tempHome } from '../sessions/helpers.js'
import { batteriesTree } from './helpers.js'

type Attachment = { name: string; media_type: string; size: number; data_b64: string }

const { home, root } = tempHome('batteries')
let rt: Runtime
let dist: string
let server: Server
let port: number
let online: Session
let offline: Session

// Width and height from a PNG's IHDR chunk.
function pngSize(a: Attachment): [number, number] {
  const buf = Buffer.from(a.data_b64, 'base64')
  assert.equal(buf.subarray(0, 8).toString('hex'), '89504e470d0a1a0a', `${a.name} is a PNG`)
  return [buf.readUInt32BE(16), buf.readUInt32BE(20)]
}

async function run(s: Session, code: string) {
  const r = await s.runBlock(code, { timeoutMs: 120_000 })
  return r as typeof r & { attachments?: Attachment[] }
}

async function ok(s: Session, code: string) {
  const r = await run(s, code)
  assert.equal(r.error, undefined, `${code}\n-> ${JSON.stringify(r.error)}`)
  return r
}

before(async () => {
  dist = await batteriesTree()
  process.env.VIS_PYTHON_HOME = dist
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ path: req.url, ua: req.headers['user-agent'] ?? '' }))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  port = (server.address() as AddressInfo).port
  rt = await createRuntime({ home, pool: { size: 0 } })
  online = await rt.createSession({ roots: [root], network: { enabled: true, allow: ['127.0.0.1'] } })
  offline = await rt.createSession({ roots: [root] })
})

after(async () => {
  await rt?.close()
  server?.close()
})

describe('the data and web sets in a confined session', () => {
  test('an idle worker has imported none of them', async () => {
    const r = await ok(
      offline,
      'import sys\nprint(sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "pandas", "matplotlib", "PIL", "requests", "httpx", "bs4", "lxml", "yaml", "pytz"}))',
    )
    assert.equal(r.stdout, '[]\n')
  })

  test('requests and httpx GET a loopback server through the egress path', async () => {
    const r = await ok(
      online,
      `import requests, httpx\nr = requests.get("http://127.0.0.1:${port}/from-requests", timeout=30)\nprint(r.status_code, r.json()["path"])\nprint(httpx.get("http://127.0.0.1:${port}/from-httpx", timeout=30).json()["path"])`,
    )
    assert.equal(r.stdout, '200 /from-requests\n/from-httpx\n')
  })

  test('with the network off, requests and httpx are refused with the policy named', async () => {
    const r = await run(offline, `import requests\nrequests.get("http://127.0.0.1:${port}/", timeout=30)`)
    assert.ok(r.error, 'the GET must fail')
    assert.match(r.error.message, /network/i)
    assert.match(r.error.message, /ConnectionError/)
    const h = await run(offline, `import httpx\nhttpx.get("http://127.0.0.1:${port}/", timeout=30)`)
    assert.ok(h.error)
    assert.match(h.error.message, /network/i)
  })

  test('pandas round-trips a DataFrame through a CSV under the root', async () => {
    const r = await ok(
      offline,
      'import pandas as pd, numpy as np\ndf = pd.DataFrame({"x": np.arange(5), "y": np.arange(5) ** 2})\ndf.to_csv("table.csv", index=False)\nback = pd.read_csv("table.csv")\nprint(back["y"].sum(), back.equals(df))',
    )
    assert.equal(r.stdout, '30 True\n')
    assert.equal(readFileSync(join(root, 'table.csv'), 'utf8'), 'x,y\n0,0\n1,1\n2,4\n3,9\n4,16\n')
  })

  test('a chart is saved under the root and plt.show() attaches it as a PNG', async () => {
    const r = await ok(
      offline,
      'import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(4, 3), dpi=50)\nax.plot([1, 3, 2])\nfig.savefig("chart.png")\nplt.show()\nprint(matplotlib.get_backend() if "matplotlib" in dir() else plt.get_backend())',
    )
    assert.equal(r.stdout, 'agg\n')
    assert.equal(r.attachments?.length, 1)
    assert.equal(r.attachments![0]!.media_type, 'image/png')
    assert.deepEqual(pngSize(r.attachments![0]!), [200, 150])
    assert.equal(readFileSync(join(root, 'chart.png')).subarray(1, 4).toString(), 'PNG')
    // show() closed it: the next block attaches nothing.
    const next = await ok(offline, 'print(len(plt.get_fignums()))')
    assert.equal(next.stdout, '0\n')
    assert.equal(next.attachments, undefined)
  })

  test('a figure left open at the end of a block is attached; past the cap, a note says what was dropped', async () => {
    const open = await ok(offline, 'plt.figure(figsize=(2, 2), dpi=40)\nplt.bar(["a", "b"], [1, 2])\nNone')
    assert.deepEqual(pngSize(open.attachments![0]!), [80, 80])
    const many = await ok(offline, 'for i in range(18):\n    plt.figure(figsize=(1, 1), dpi=20)')
    assert.equal(many.attachments?.length, 16)
    assert.match(many.stdout ?? '', /\[vis: figure-17\.png was not attached: at most 16 figures per block\]/)
    assert.match(many.stdout ?? '', /figure-18\.png was not attached/)
    const huge = await ok(offline, 'plt.figure(figsize=(400, 400))\nplt.plot([0, 1])\nNone')
    assert.equal(huge.attachments?.length, 1)
    assert.match(
      huge.stdout ?? '',
      /figure-1\.png was drawn at \d+ dpi instead of 100 to stay under the size cap/,
    )
    const [w, h] = pngSize(huge.attachments![0]!)
    assert.ok(w * h <= 16_000_000, `${w}x${h}`)
  })

  test('an image is resized, saved under the root, and vis_attach(img) attaches it', async () => {
    const r = await ok(
      offline,
      'from PIL import Image\nimg = Image.new("RGB", (64, 48), (200, 30, 30)).resize((32, 24))\nimg.save("small.jpg")\nvis_attach(img, "small.png")\nprint(Image.open("small.jpg").size)',
    )
    assert.equal(r.stdout, '(32, 24)\n')
    assert.equal(r.attachments?.[0]?.name, 'small.png')
    assert.deepEqual(pngSize(r.attachments![0]!), [32, 24])
    const bad = await run(offline, 'vis_attach(42)')
    assert.match(
      bad.error?.message ?? '',
      /vis_attach takes a file path, a PIL image or a matplotlib figure, not int/,
    )
  })

  test('bs4 with lxml, lxml.etree and yaml parse', async () => {
    const r = await ok(
      offline,
      'import bs4, yaml\nfrom lxml import etree\nsoup = bs4.BeautifulSoup("<ul><li>a</li><li>b</li></ul>", "lxml")\nprint([li.text for li in soup.find_all("li")])\nprint(etree.fromstring("<r><x>1</x></r>").findtext("x"))\nprint(yaml.safe_load("k: [1, 2]"), yaml.__with_libyaml__)',
    )
    assert.equal(r.stdout, "['a', 'b']\n1\n{'k': [1, 2]} True\n")
  })

  test('apropos and doc find the staged packages', async () => {
    const r = await ok(offline, 'print(apropos("data analysis"))\nprint(doc("numpy"))\nprint(doc("Pillow"))')
    assert.match(
      r.stdout ?? '',
      /^pandas {2}\[package\] {2}pandas 1\.5\.\d+: Powerful data structures for data analysis/m,
    )
    assert.match(
      r.stdout ?? '',
      /^numpy {2}\[package\]\n\nnumpy 1\.24\.\d+: Fundamental package for array computing/m,
    )
    assert.match(r.stdout ?? '', /^PIL {2}\[package Pillow 9\.4\.\d+\]\n\n.*\nimport PIL$/m)
  })
})

describe('the packages stay inside the jail', () => {
  // Outside the roots: a host directory the jail does not show, and the distribution
  // itself (read-only; code planted there would load in every session).
  const outside = () => [join(home, 'planted'), join(dist, 'lib', 'python3.11', 'site-packages', 'planted')]

  const writers: [string, (p: string) => string][] = [
    ['numpy', (p) => `import numpy as np\nnp.save(${JSON.stringify(`${p}.npy`)}, np.arange(3))`],
    ['pandas', (p) => `import pandas as pd\npd.DataFrame({"a": [1]}).to_csv(${JSON.stringify(`${p}.csv`)})`],
    ['PIL', (p) => `from PIL import Image\nImage.new("L", (2, 2)).save(${JSON.stringify(`${p}.png`)})`],
    [
      'matplotlib',
      (p) => `import matplotlib.pyplot as plt\nplt.figure().savefig(${JSON.stringify(`${p}.svg`)})`,
    ],
    ['yaml', (p) => `import yaml\nyaml.safe_dump({"a": 1}, open(${JSON.stringify(`${p}.yaml`)}, "w"))`],
  ]
  for (const [pkg, code] of writers) {
    test(`${pkg} cannot write outside the roots`, async () => {
      for (const target of outside()) {
        const r = await run(offline, code(target))
        assert.ok(r.error, `${pkg} wrote ${target}`)
        assert.match(r.error.message, /PermissionError: vis: writing '.*planted.*' is not allowed/)
      }
      assert.deepEqual(
        readdirSync(join(dist, 'lib', 'python3.11', 'site-packages')).filter((n) => n.startsWith('planted')),
        [],
      )
      assert.equal(existsSync(join(home, 'planted')), false)
    })
  }

  test('lxml writing through libxml2 (no Python open) is stopped by the kernel', async () => {
    const target = join(dist, 'lib', 'python3.11', 'site-packages', 'planted.xml')
    const r = await run(
      offline,
      `from lxml import etree\netree.ElementTree(etree.Element("r")).write(${JSON.stringify(target)})`,
    )
    assert.ok(r.error)
    assert.match(r.error.message, /OSError|PermissionError|Read-only file system|Error writing/i)
    assert.equal(existsSync(target), false)
  })

  test('no package starts a process: matplotlib with usetex is refused at the door', async () => {
    const r = await run(
      offline,
      'import matplotlib.pyplot as plt\nplt.rcParams["text.usetex"] = True\nfig = plt.figure()\nfig.text(0.5, 0.5, "$x$")\nfig.savefig("tex.png")',
    )
    await run(offline, 'plt.rcParams["text.usetex"] = False\nplt.close("all")')
    assert.ok(r.error)
    assert.match(r.error.message, /subprocess\.\w+: processes cannot be spawned in this session/)
  })

  test('no package loads code from outside the distribution', async () => {
    writeFileSync(join(root, 'evil.so'), 'not really a library')
    const ct = await run(
      offline,
      `import numpy as np\nnp.ctypeslib.load_library("evil.so", ${JSON.stringify(root)})`,
    )
    assert.match(ct.error?.message ?? '', /ctypes is disabled by the sandbox policy \[ctypes\.dlopen\]/)
    const libc = await run(offline, 'import ctypes\nctypes.CDLL("libc.so.6")')
    assert.match(libc.error?.message ?? '', /ctypes is disabled by the sandbox policy \[ctypes\.dlopen\]/)
    // Loaded, ctypes still calls nothing.
    const call = await run(offline, 'import ctypes\nctypes.pythonapi.Py_GetVersion()')
    assert.match(call.error?.message ?? '', /ctypes is disabled by the sandbox policy \[ctypes\./)
  })
})
