import { formatBatteries, measureBatteries } from '../../bench/batteries.js'
import { formatHttp, measureHttp } from '../../bench/http.js'
import { formatRoundtrip, measureRoundtrip } from '../../bench/roundtrip.js'
import { pythonHome } from '../../worker/python-home.js'
import type { Command } from '../command.js'

const usage = `Usage: vis bench [--json] [--iterations N] [--python 3.X] [--no-pin]
       vis bench --http [--json] [--iterations N] [--warmup N] [--python 3.X]
       vis bench --batteries [--json] [--python 3.X]

Measures session worker round trips on this machine and prints them beside a
baseline measured in the same run (a bare Node-to-Node JSON-line ping-pong over a
socketpair): exec of \`x = 1\`, a host tool call from Python, a 64 KiB string,
taking a session from the warm pool, a cold session start, and an idle worker's
memory. Every p50 has its p99 beside it; for the floor, exec and a host call the
tail is also shown without each sample's run-queue wait (the time the threads on the
path were runnable but had no CPU, from /proc schedstat), with the share of the
slowest 1% that mostly waited. Figures are reported, not judged; the targets are
shown for reference.

  --json          print one JSON object instead of the table
  --iterations N  round trips per measurement (default 2000)
  --python 3.X    the Python minor to measure (default: the resolved one)
  --no-pin        leave placement to the scheduler; by default this process runs on
                  one CPU and both peers (baseline and worker) on another, so the two
                  are compared under the same placement, run after run
  --http          measure the HTTP API instead: a block \`x = 1\` over keep-alive on a
                  warm session against a floor of the same run (an HTTP echo + the
                  worker's exec + one fsync), then 20 sessions x 20 blocks at once
  --warmup N      with --http: blocks run before measuring (default 3000), so V8 has
                  finished optimizing the request path and the steady state is measured
  --batteries     what the staged package set costs instead: cold session start and
                  idle worker RSS against the same CPython staged without the set (same run), and
                  the first import of numpy, pandas, matplotlib.pyplot, PIL and requests
                  in a session (bench/batteries.js runs the same)`

export const bench: Command = {
  name: 'bench',
  usage,
  async run(argv) {
    const opt = (name: string) => {
      const i = argv.indexOf(name)
      return i >= 0 ? argv[i + 1] : undefined
    }
    if (argv.includes('--batteries')) {
      const tree = (await pythonHome(opt('--python'))).root
      const r = await measureBatteries(tree)
      console.log(argv.includes('--json') ? JSON.stringify(r) : formatBatteries(r))
      return 0
    }
    const n = opt('--iterations')
    const iterations = n === undefined ? undefined : Number(n)
    if (iterations !== undefined && !(Number.isInteger(iterations) && iterations >= 100)) {
      console.error('vis bench: --iterations takes a whole number of at least 100')
      return 2
    }
    if (argv.includes('--http')) {
      const w = opt('--warmup')
      const warmup = w === undefined ? undefined : Number(w)
      if (warmup !== undefined && !(Number.isInteger(warmup) && warmup >= 0)) {
        console.error('vis bench: --warmup takes a whole number of blocks (0 or more)')
        return 2
      }
      const r = await measureHttp({ iterations, warmup, python: opt('--python') })
      console.log(argv.includes('--json') ? JSON.stringify(r) : formatHttp(r))
      return 0
    }
    const result = await measureRoundtrip({
      iterations,
      python: opt('--python'),
      pin: !argv.includes('--no-pin'),
    })
    console.log(argv.includes('--json') ? JSON.stringify(result) : formatRoundtrip(result))
    return 0
  },
}
