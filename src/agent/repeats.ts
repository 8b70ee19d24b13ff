// The turn's loop breaker. The guest warns the model from the third identical failure in a row
// (vis_guest/errors.py, "LOOP: ..."); a model that goes on repeating itself after that is not
// converging, and each further block costs a request: at the fifth the turn ends, failed, saying
// why, instead of running to its iteration cap.
export const WARN_AT_REPEATS = 3
export const END_AT_REPEATS = 5

// What the guest puts before the message of a repeated failure: not part of the failure itself.
const LOOP_PREFIX = /^LOOP: [^\n]*\n/

type FailureLike = { phase?: unknown; code?: unknown; message?: unknown; line?: unknown; column?: unknown }

export function failureKey(error: FailureLike | null | undefined): string | undefined {
  if (!error) return undefined
  const message = String(error.message ?? '').replace(LOOP_PREFIX, '')
  return JSON.stringify([
    error.phase ?? error.code ?? null,
    message,
    error.line ?? null,
    error.column ?? null,
  ])
}

// Counts identical failures in a row across the turn's blocks; any success or other failure resets.
export class RepeatedFailures {
  private key: string | undefined
  count = 0
  // The last failure's first line, for the turn's reason.
  last = ''

  note(error: FailureLike | null | undefined): void {
    const key = failureKey(error)
    if (key === undefined) {
      this.key = undefined
      this.count = 0
      return
    }
    this.count = key === this.key ? this.count + 1 : 1
    this.key = key
    const phase = String(error?.phase ?? error?.code ?? 'runtime')
    this.last = `${phase} error: ${
      String(error?.message ?? '')
        .replace(LOOP_PREFIX, '')
        .split('\n')[0]
    }`
  }

  get exhausted(): boolean {
    return this.count >= END_AT_REPEATS
  }
}
