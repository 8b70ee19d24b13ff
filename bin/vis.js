#!/usr/bin/env node
// `vis python` loads only its own command (start-up as python3's, within Node's own); every
// other command goes through the full CLI.
const argv = process.argv.slice(2)
const entry = argv[0] === 'python' ? '../dist/cli/python-main.js' : '../dist/cli/main.js'
import(entry)
  .then((m) => m.main(argv[0] === 'python' ? argv.slice(1) : argv))
  .catch((err) => {
    console.error(err?.stack ?? String(err))
    process.exit(1)
  })
