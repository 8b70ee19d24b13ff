// A small least-recently-used map: Map keeps insertion order, so re-inserting on a hit
// moves an entry to the back and the front is always the coldest.
//
// Bounded by entries and, when given `maxWeight` and `weigh`, by the sum of its values' weights
// too: a count alone lets the memory grow with what each value holds (the display formatter's
// cache held 1000 results of 15 MB each: fourteenth outsider pass). A value heavier than the
// whole budget is not kept.
export type LruWeight<V> = { maxWeight: number; weigh: (value: V) => number }

export class Lru<K, V> {
  private readonly map = new Map<K, V>()
  private readonly weights = new Map<K, number>()
  private total = 0

  constructor(
    readonly capacity: number,
    private readonly budget?: LruWeight<V>,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError('Lru capacity must be a positive integer')
    if (budget && !(budget.maxWeight > 0)) throw new RangeError('Lru maxWeight must be positive')
  }

  get size(): number {
    return this.map.size
  }

  // The sum of the kept values' weights (0 without a weight bound).
  get weight(): number {
    return this.total
  }

  get(key: K): V | undefined {
    if (!this.map.has(key)) return undefined
    const value = this.map.get(key) as V
    this.map.delete(key)
    this.map.set(key, value)
    return value
  }

  set(key: K, value: V): void {
    this.delete(key)
    const w = this.budget ? this.budget.weigh(value) : 0
    if (this.budget && w > this.budget.maxWeight) return
    this.map.set(key, value)
    this.weights.set(key, w)
    this.total += w
    while (this.map.size > this.capacity || (this.budget && this.total > this.budget.maxWeight)) {
      const oldest = this.map.keys().next()
      if (oldest.done) break
      this.delete(oldest.value)
    }
  }

  delete(key: K): void {
    if (!this.map.delete(key)) return
    this.total -= this.weights.get(key) ?? 0
    this.weights.delete(key)
  }

  clear(): void {
    this.map.clear()
    this.weights.clear()
    this.total = 0
  }
}
