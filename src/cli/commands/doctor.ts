import { parseArgs } from 'node:util'
import { agentChecks, skillChecks } from '../../agent/doctor.js'
import { summaryLines } from '../../confinement/advice.js'
import { egressChecks } from '../../confinement/egress/health.js'
import { hostProgramChecks } from '../../confinement/host-program-checks.js'
import { exitCodeFor, probe } from '../../confinement/probe.js'
import { extensionChecks } from '../../extensions/index.js'
import { visibleControls, visibleJson } from '../agent/visible.js'
import type { Command } from '../command.js'
import { SESSION_NEEDS, sessionChecks } from './doctor-sessions.js'

const usage = `Usage: vis doctor [--json] [--project DIR]

Probe every confinement layer on this machine and say what is enforced:
kernel, Landlock ABI, seccomp, user/mount/pid/net/ipc namespaces (entered
through bubblewrap), cgroups (memory, pids, whether a child group can be
created), bubblewrap, vis-launcher, vis_confine.node, staged distributions; the
binary each program the host starts resolves to (system directories, VIS_HOST_PATH
or VIS_BWRAP, never PATH); what
sessions need: a writable vis home (VIS_HOME), the SQLite driver, a runtime addon that
loads for each staged Python, and, when the default Python is not here yet, whether its
download location answers (within 5 s) and how big it is; the egress
path (relay -> host proxy -> checked dial, and its address floor); then load
the trusted extensions (~/.vis/extensions and DIR/.vis/extensions) and warn for each
file that fails to load; the agent's model (VIS_MODEL or ~/.vis/agent.json) and
whether its endpoint answers; last, the skills and agent definitions a session rooted at DIR
gets (DIR's .vis, .claude and .agents folders, ~/.vis, ~/.claude), what shadows what, and
each file that could not be read, with the reason.

  --json          print the full report as JSON (what the HTTP API serves)
  --project DIR   the project whose .vis/extensions to load (default: the current directory)

Exit status: 0 all info, 1 warnings, 2 errors (a sandbox would refuse to start).`

const MARK = { info: 'ok  ', warn: 'WARN', error: 'FAIL' } as const

export const doctor: Command = {
  name: 'doctor',
  usage,
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: { json: { type: 'boolean', default: false }, project: { type: 'string' } },
    })
    const probed = probe({ fresh: true })
    const report = {
      ...probed,
      checks: [
        ...probed.checks,
        ...hostProgramChecks(),
        ...(await sessionChecks(probed)),
        ...(await egressChecks()),
        ...(await extensionChecks({ project: values.project ?? process.cwd() })),
        ...(await agentChecks()),
        ...(await skillChecks({ project: values.project ?? process.cwd() })),
      ],
    }
    const code = exitCodeFor(report.checks)
    if (values.json) {
      process.stdout.write(`${visibleJson({ ...report, exitCode: code })}\n`)
      return code
    }
    // A check names what it found: skill folders and extension files a session's block may have
    // named in DIR, shown, not obeyed (visible.ts).
    for (const c of report.checks)
      process.stdout.write(visibleControls(`${MARK[c.level]}  ${c.id.padEnd(14)} ${c.message}\n`))
    const summary =
      code === 0
        ? 'all layers available'
        : code === 1
          ? 'warnings above'
          : report.checks.some((c) => c.level === 'error' && SESSION_NEEDS.has(c.id))
            ? 'errors above: sessions cannot run until they are fixed'
            : report.checks.some((c) => c.id === 'opt-out')
              ? 'errors above: VIS_ALLOW_UNCONFINED=1, so sandboxes start WITHOUT the missing layers'
              : 'errors above: sandboxes will refuse to start'
    process.stdout.write(`\n${summary}\n`)
    const advice = summaryLines(report.checks)
    if (code !== 0) process.stdout.write(visibleControls(`\n${advice.join('\n')}\n`))
    return code
  },
}
