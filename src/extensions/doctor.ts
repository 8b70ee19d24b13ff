import type { Check } from '../confinement/probe.js'
import { errorMessage } from '../util/errors.js'
import { closeRegistrationWorkers } from './registration.js'
import { ExtensionRegistry, type ExtensionWarning, type RegistryOptions } from './registry.js'

// Extension files that failed to load, as `vis doctor` checks: one warning per file.
export function warningChecks(loaded: number, warnings: ExtensionWarning[]): Check[] {
  const checks: Check[] = warnings.map((w) => ({
    id: 'extension',
    level: 'warn' as const,
    message: `${w.path}: ${w.reason}`,
  }))
  if (warnings.length === 0)
    checks.push({ id: 'extensions', level: 'info', message: `${loaded} loaded, none failed` })
  return checks
}

// Loads the extensions as a host would and reports what failed. With a registry already
// open (a running host), pass it to report its current state instead.
export async function extensionChecks(
  opts: RegistryOptions & { registry?: ExtensionRegistry } = {},
): Promise<Check[]> {
  if (opts.registry) return warningChecks(opts.registry.list().length, opts.registry.warnings())
  try {
    const reg = await ExtensionRegistry.open(opts)
    await reg.close()
    return warningChecks(reg.list().length, reg.warnings())
  } catch (err) {
    return [
      { id: 'extensions', level: 'warn', message: `extensions could not be loaded: ${errorMessage(err)}` },
    ]
  } finally {
    await closeRegistrationWorkers()
  }
}
