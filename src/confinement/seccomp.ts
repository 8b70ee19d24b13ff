import { VisError } from '../util/errors.js'
import { loadConfineAddon, type SeccompOptions, type SeccompReport } from './native.js'

// Installs the worker's seccomp filter on every thread (TSYNC), then checks each
// thread's status: the worker must refuse to run Python when this throws.
export function installSeccomp(options: SeccompOptions): SeccompReport {
  const addon = loadConfineAddon()
  if (!addon) {
    throw new VisError(
      'confine.addon-missing',
      'vis_confine.node is not built: run `npm run build:addon`',
      {},
    )
  }
  try {
    addon.installSeccomp(options)
  } catch (err) {
    throw new VisError('confine.seccomp', (err as Error).message, { op: 'confine' }, { cause: err })
  }
  return verifySeccomp()
}

export function verifySeccomp(): SeccompReport {
  const addon = loadConfineAddon()
  if (!addon) {
    throw new VisError(
      'confine.addon-missing',
      'vis_confine.node is not built: run `npm run build:addon`',
      {},
    )
  }
  const report = addon.verifySeccomp()
  if (!report.ok) {
    throw new VisError(
      'confine.seccomp-unverified',
      `seccomp is missing on thread(s) ${report.unfiltered.join(', ')}; refusing to run Python`,
      { op: 'confine', threads: report.threads },
    )
  }
  return report
}
