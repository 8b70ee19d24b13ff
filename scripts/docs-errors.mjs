#!/usr/bin/env node
// Writes docs/errors.md from the error catalogue (src/util/error-catalogue.ts).
// Run with `npm run docs:errors`; test/util/error-catalogue.test.ts fails until the file is current.
import { writeFileSync } from 'node:fs'
import { renderErrorsDoc } from '../src/util/error-doc.ts'

const file = new URL('../docs/errors.md', import.meta.url)
writeFileSync(file, renderErrorsDoc())
console.log(`wrote ${file.pathname}`)
