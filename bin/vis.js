#!/usr/bin/env node
import('../dist/cli/main.js')
  .then((m) => m.main(process.argv.slice(2)))
  .catch((err) => {
    console.error(err?.stack ?? String(err))
    process.exit(1)
  })
