// The longest the host's event loop went without running a 10 ms timer while `work` ran: how
// long a host-side computation the sandbox caused stopped every other session.
export async function worstStall<T>(work: () => Promise<T>): Promise<{ result: T; worst: number }> {
  let last = performance.now()
  let worst = 0
  const tick = setInterval(() => {
    const now = performance.now()
    worst = Math.max(worst, now - last)
    last = now
  }, 10)
  try {
    const result = await work()
    return { result, worst }
  } finally {
    clearInterval(tick)
  }
}
