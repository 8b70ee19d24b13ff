// One tree's figures for batteries.ts, printed as JSON (VIS_PYTHON_HOME names the tree).
import { measureTree } from './batteries.js'

const [sessions, imports] = process.argv.slice(2)
const r = await measureTree({ sessions: Number(sessions ?? 5), imports: imports === '1' })
process.stdout.write(JSON.stringify(r))
process.exit(0)
