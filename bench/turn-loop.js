#!/usr/bin/env node
// The agent loop's own overhead per iteration (issue 17): everything a turn spends that is
// neither the model request nor the block: persisting the iteration and its usage, submitting
// and recording the block, rendering what the model reads, events. Reported, never asserted.
//
//   npm run build && node --import tsx bench/turn-loop.js [--turns N] [--iterations N] [--durability normal|full] [--double process|in-process] [--json]
//
// The model is the provider double (a loopback server speaking Chat Completions) through the
// official SDK; each request's time is measured around the provider and subtracted, as is each
// block's (block.started → block.ended). Beside it, the same run's official SDK calling the
// double directly and a trivial block's round trip through the same engine (bench/lib/turn-loop.js).
import { formatTurnLoop, measureTurnLoop } from './lib/turn-loop.js'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : dflt
}
const result = await measureTurnLoop({
  turns: Number(opt('--turns', 30)),
  iterations: Number(opt('--iterations', 8)),
  durability: opt('--durability', 'normal'),
  double: opt('--double', 'process'),
})
console.log(argv.includes('--json') ? JSON.stringify(result) : formatTurnLoop(result))
