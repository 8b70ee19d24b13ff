// The set-up the attacks on a trusted project extension share: a project whose .vis/extensions holds
// a one-tool extension `probe` that a person trusted (`vis ext trust --project`), the engine whose
// project it is (its registry hashes and loads the folder as it starts), and another engine's session.
import assert from 'node:assert/strict'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { trustProject } from '../../src/extensions/trust.js'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { python } from '../sessions/helpers.js'

// probe.py: `import <module>`, and the tool probe_run() answers `answer` (a Python expression).
export function probeExtension(module: string, answer: string): string {
  return `import vis\nimport ${module}\n\n\ndef run():\n    """Run."""\n    return ${answer}\n\n\nvis.register(vis.Extension(name="probe", tools=[run]))\n`
}

// Makes `home` and `project`, writes `files` into the project's extension folder (its own
// .vis/extensions, or with `linked` tools/vis-ext, which .vis/extensions links to as
// `../tools/vis-ext`) and trusts it as it is now. Returns the folder the files are in.
export function trustedProject(
  home: string,
  project: string,
  files: Record<string, string>,
  opts: { linked?: boolean } = {},
): string {
  const ext = join(project, '.vis', 'extensions')
  const dir = opts.linked ? join(project, 'tools', 'vis-ext') : ext
  mkdirSync(dir, { recursive: true })
  mkdirSync(join(project, '.vis'), { recursive: true })
  mkdirSync(home)
  if (opts.linked) symlinkSync('../tools/vis-ext', ext)
  process.env.VIS_HOME = home
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  // The person's `vis ext trust --project <project>`.
  trustProject(home, project, ext)
  return dir
}

// The engine whose project it is (`vis chat` there), once its registry has loaded the trusted probe.
export async function withProjectEngine(
  home: string,
  project: string,
  use: (e: Engine) => Promise<void>,
): Promise<void> {
  const e = await createEngine({ home, python, pool: { size: 0 }, project })
  try {
    assert.deepEqual(
      e.extensions?.list().map((x) => x.key),
      ['probe'],
    )
    await use(e)
  } finally {
    await e.close()
  }
}

// One block of a session on `roots` in another engine (no project: another host process), closed after.
export async function blockInOtherEngine(home: string, roots: string[], code: string) {
  const a = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await a.createSession({ roots })
    return await a.runBlock(s.id, { code })
  } finally {
    await a.close()
  }
}

// A sandbox plants what an attack needs: one block (`lines`) of a session on `root`, in a runtime
// with `home`, which must run without error and print `done`.
export async function plantInSession(
  home: string,
  root: string,
  lines: string[],
  done: RegExp,
  opts: { timeoutMs?: number } = {},
): Promise<void> {
  const rt = await createRuntime({ home, python, pool: { size: 0 } })
  try {
    const s = await rt.createSession({ roots: [root] })
    try {
      const r = await s.runBlock(lines.join('\n'), opts)
      assert.equal(r.error ?? null, null, JSON.stringify(r.error))
      assert.match(r.stdout ?? '', done)
    } finally {
      await s.dispose()
    }
  } finally {
    await rt.close()
  }
}

// plantInSession for the attacks on the trust check's walk: the block makes the extension folder
// `extDir` (the project's own .vis/extensions, or a linked one's target) and runs `lines` with `ext`
// naming it.
export async function plantInExtensionFolder(
  home: string,
  root: string,
  extDir: string,
  lines: string[],
  done: RegExp,
  opts: { timeoutMs?: number } = {},
): Promise<void> {
  await plantInSession(
    home,
    root,
    ['import os', `ext = ${JSON.stringify(extDir)}`, 'os.makedirs(ext, exist_ok=True)', ...lines],
    done,
    opts,
  )
}

// A project nobody trusted (base/app<suffix>, no .vis yet) and its vis home (base/home<suffix>).
export function untrustedProject(base: string, suffix = ''): { home: string; project: string } {
  const home = join(base, `home${suffix}`)
  const project = join(base, `app${suffix}`)
  mkdirSync(home)
  mkdirSync(project)
  return { home, project }
}

// The dotfiles layout: .vis/extensions links to ../tools/vis-ext, which holds a one-file extension
// whose tool answers csv.VALUE (planted) or "the real csv".
export function trustedLinkedCsvProbe(home: string, project: string): string {
  return trustedProject(
    home,
    project,
    { 'probe.py': probeExtension('csv', 'getattr(csv, "VALUE", "the real csv")') },
    { linked: true },
  )
}

// The module a block plants: imported on the host, it writes `marker` (outside every root).
export function plantedModule(marker: string, value: string): string {
  return `open(${JSON.stringify(marker)}, 'w').write('unconfined')\nVALUE = '${value}'\n`
}

// A new session of `e` on the project calls the probe's tool.
export async function callProbe(e: Engine, project: string) {
  const s = await e.createSession({ roots: [project] })
  return e.runBlock(s.id, { code: 'print(await probe_run())' })
}

// A project (base/app) whose .vis/extensions is the person's link to a folder outside it
// (base/shared/vis-ext) holding one trusted extension `hello`: a session rooted at base/shared
// may write the link's target. Returns the paths; `suffix` names a second layout in one base.
export function trustedSharedExtension(base: string, suffix = '') {
  const home = join(base, `home${suffix}`)
  const project = join(base, `app${suffix}`)
  const shared = join(base, `shared${suffix}`)
  const ext = join(shared, 'vis-ext')
  mkdirSync(home)
  mkdirSync(ext, { recursive: true })
  mkdirSync(join(project, '.vis'), { recursive: true })
  symlinkSync(`../../shared${suffix}/vis-ext`, join(project, '.vis', 'extensions'))
  writeFileSync(
    join(ext, 'hello.py'),
    'import vis\n\n\ndef hi():\n    """Hi."""\n    return "hi"\n\n\nvis.register(vis.Extension(name="hello", tools=[hi]))\n',
  )
  // The person's `vis ext trust --project app`.
  trustProject(home, project, join(project, '.vis', 'extensions'))
  return { home, project, shared, ext }
}
