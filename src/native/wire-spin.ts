// The most a worker's idle interpreter thread may poll its socket before sleeping (µs): the
// addon's wire reader spins (native/runtime/wire.cc), and the host checks the option against
// this bound before it reaches the worker.
export const MAX_SPIN_US = 10_000
export const isSpinUs = (n: unknown): n is number =>
  typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= MAX_SPIN_US
