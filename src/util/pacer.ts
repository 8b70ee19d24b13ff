// Host-side loops over sandbox-sized data run on the event loop every session shares.
// A Pacer is charged with units of work as such a loop goes and, once a slice of time has
// passed since it last let go, hands back a promise that resolves on the next turn of the
// loop: the caller awaits it, so timers, streams and other sessions run in between. Charging
// is cheap (the clock is read only every CHECK_EVERY units), so it can sit in tight loops.
const SLICE_MS = 20
const CHECK_EVERY = 20_000

export class Pacer {
  private units = 0
  private since = performance.now()

  // Returns a promise to await when it is time to let the loop run, else undefined.
  charge(units: number): Promise<void> | undefined {
    this.units += units
    if (this.units < CHECK_EVERY) return undefined
    this.units = 0
    if (performance.now() - this.since < SLICE_MS) return undefined
    return new Promise<void>((done) =>
      setImmediate(() => {
        this.since = performance.now()
        done()
      }),
    )
  }
}
