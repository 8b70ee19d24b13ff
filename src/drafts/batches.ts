const BATCH = 32

// fn over items, BATCH at a time (file operations overlap; open files stay bounded).
export async function inBatches<T>(items: T[], fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += BATCH) await Promise.all(items.slice(i, i + BATCH).map(fn))
}
