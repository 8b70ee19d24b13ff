import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { Store, type StoreOptions } from '../../src/persistence/index.js'

// A fresh vis home per call, also exported as VIS_HOME so nothing can reach ~/.vis; removed after the file.
export function tempHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'vis-persist-'))
  process.env.VIS_HOME = home
  after(() => rmSync(home, { recursive: true, force: true }))
  return home
}

export function openTempStore(options: StoreOptions = {}): Store {
  const store = new Store({ home: tempHome(), ...options })
  after(() => store.close())
  return store
}
