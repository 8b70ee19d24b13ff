// Runs the CLI from source, as bin/vis.js runs it from dist/.
import { main } from '../../src/cli/main.js'

await main(process.argv.slice(2))
