import type { Command } from '../command.js'
import { bench } from './bench.js'
import { bundle } from './bundle.js'
import { chat } from './chat.js'
import { cluster } from './cluster.js'
import { doctor } from './doctor.js'
import { ext } from './ext.js'
import { mcp } from './mcp.js'
import { python } from './python.js'
import { run } from './run.js'
import { runtime } from './runtime.js'
import { serve } from './serve.js'
import { sessions } from './sessions.js'

// Every command the CLI knows. Add a command by adding its module here.
export const commands: Command[] = [
  runtime,
  doctor,
  python,
  serve,
  sessions,
  bench,
  ext,
  mcp,
  bundle,
  run,
  chat,
  cluster,
]
