import { existsSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { extensionView } from '../../engine/views.js'
import { extensionDirs } from '../../extensions/discover.js'
import { closeRegistrationWorkers } from '../../extensions/registration.js'
import { ExtensionRegistry } from '../../extensions/registry.js'
import { runExtensionTests } from '../../extensions/tests.js'
import { trustProject } from '../../extensions/trust.js'
import { openStore } from '../../persistence/store.js'
import { errorMessage } from '../../util/errors.js'
import { visibleControls, visibleJson } from '../agent/visible.js'
import type { Command } from '../command.js'

// A project's extension files lie in DIR/.vis/extensions, which a session rooted at DIR may
// have named and filled: their names, descriptions and errors are shown, not obeyed (visible.ts).
const say = (s: string) => process.stdout.write(visibleControls(s))

const usage = `Usage: vis ext list|reload|test [NAME]|trust [--project DIR] [--python 3.X] [--json]

Trusted Python extensions: every *.py and <dir>/extension.py in ~/.vis/extensions
(global) and <project>/.vis/extensions (project; wins on a name clash). A project's
folder loads only once you trusted its exact content (\`vis ext trust\`): a session
working in the project may have written it, and extensions run outside every sandbox.

  list          what loads, with its tools (as the model sees them), and every file
                that failed to load with the reason
  reload        load every file again and report; a running host reloads through
                its API (POST /v1/extensions/reload), keeping a failed file's previous version
  test [NAME]   run the extensions' own test_*.py / *_test.py with real pytest in a
                trusted worker; the counts come from per-test records
  trust         list every file of DIR/.vis/extensions and trust that content as it is
                now (a record in the vis home); any later change needs trusting again

  --project DIR   the project whose .vis/extensions to include (default: the current directory)
  --python 3.X    the staged Python minor to use
  --json          print the report as JSON

Exit status: list/reload 0, or 1 when a file failed to load; test 0 when nothing failed,
1 when a test failed or errored (or NAME has no tests), 2 for a usage error.`

async function listOrReload(
  values: { project: string; python?: string; json: boolean },
  verb: string,
): Promise<number> {
  const store = openStore()
  try {
    const reg = await ExtensionRegistry.open({ project: values.project, python: values.python, store })
    // The CLI's report has always left the registry key out.
    const loaded = reg.list().map((e) => {
      const { key: _key, ...view } = extensionView(reg, e)
      return view
    })
    const warnings = reg.warnings()
    const shadowed = reg.shadowed().map((s) => s.path)
    await reg.close()
    if (values.json) {
      process.stdout.write(`${visibleJson({ loaded, warnings, shadowed })}\n`)
    } else {
      if (verb === 'reload') say('reloaded\n')
      if (loaded.length === 0 && warnings.length === 0)
        say(`no extensions in ${reg.dirs.join(', ') || 'any extension directory'}\n`)
      for (const e of loaded) {
        say(`${e.name} ${e.version} (${e.scope}) ${e.path}\n`)
        if (e.description) say(`  ${e.description}\n`)
        for (const t of e.tools) say(`  tool  ${t}\n`)
        for (const h of e.hooks) say(`  hook  ${h}\n`)
      }
      for (const s of shadowed) say(`shadowed by a project extension: ${s}\n`)
      for (const w of warnings) say(`WARN  ${w.path}: ${w.reason}\n`)
    }
    return warnings.length > 0 ? 1 : 0
  } finally {
    store.close()
    await closeRegistrationWorkers()
  }
}

async function test(
  name: string | undefined,
  values: { project: string; python?: string; json: boolean },
): Promise<number> {
  const store = openStore()
  try {
    const reports = await runExtensionTests({ project: values.project, python: values.python, store, name })
    if (values.json) process.stdout.write(`${visibleJson(reports)}\n`)
    else {
      // Silence would read as "all passed".
      if (reports.length === 0) say('no extensions to test in any extension directory\n')
      for (const r of reports) {
        if (r.noTests) {
          say(`${r.key}: no tests\n`)
          continue
        }
        const c = r.counts
        say(`${r.key}: ${c.passed} passed, ${c.failed} failed, ${c.errors} errors, ${c.skipped} skipped\n`)
        for (const rec of r.records) {
          if (rec.outcome === 'failed' || rec.outcome === 'error' || rec.outcome === 'xpassed') {
            say(`  ${rec.outcome.toUpperCase()} ${rec.nodeid}: ${rec.message.split('\n')[0]}\n`)
          }
        }
      }
    }
    const bad = reports.some((r) => !r.ok) || (name !== undefined && reports.every((r) => r.noTests))
    return bad ? 1 : 0
  } finally {
    store.close()
  }
}

// Shows what is being trusted before recording it: the person ran this to say yes to these files.
function trust(values: { project: string; json: boolean }): number {
  const dir = extensionDirs({ project: values.project }).project!
  if (!existsSync(dir)) {
    process.stderr.write(visibleControls(`vis ext trust: ${dir} does not exist; nothing to trust\n`))
    return 1
  }
  let digest: ReturnType<typeof trustProject>
  try {
    digest = trustProject(undefined, values.project, dir)
  } catch (err) {
    process.stderr.write(visibleControls(`vis ext trust: ${errorMessage(err)}\n`))
    return 1
  }
  if (values.json) {
    process.stdout.write(`${visibleJson({ dir, sha256: digest.sha256, files: digest.files })}\n`)
    return 0
  }
  say(`trusted ${dir} as it is now (sha256 ${digest.sha256}):\n`)
  for (const f of digest.files) say(`  ${f}\n`)
  say('any change to these files needs `vis ext trust` again before it loads\n')
  return 0
}

export const ext: Command = {
  name: 'ext',
  usage,
  async run(argv) {
    let parsed: ReturnType<typeof parse>
    try {
      parsed = parse(argv)
    } catch (err) {
      process.stderr.write(`vis ext: ${(err as Error).message}\n\n${usage}\n`)
      return 2
    }
    const { values, positionals } = parsed
    const [verb, name, ...extra] = positionals
    const opts = {
      project: values.project ?? process.cwd(),
      python: values.python,
      json: values.json ?? false,
    }
    if ((verb === 'list' || verb === 'reload') && name === undefined) return listOrReload(opts, verb)
    if (verb === 'test' && extra.length === 0) return test(name, opts)
    if (verb === 'trust' && name === undefined) return trust(opts)
    process.stderr.write(`${usage}\n`)
    return 2
  },
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      project: { type: 'string' },
      python: { type: 'string' },
      json: { type: 'boolean' },
    },
  })
}
