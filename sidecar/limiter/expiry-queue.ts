// Keys grouped by the whole second they expire in, with the earliest second first: O(1) to list, cheap to sweep.

/** A binary min-heap of numbers. */
class MinHeap {
  private readonly items: number[] = [];
  get size(): number {
    return this.items.length;
  }
  peek(): number | undefined {
    return this.items[0];
  }
  push(value: number): void {
    const a = this.items;
    a.push(value);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent]! <= value) break;
      a[i] = a[parent]!;
      i = parent;
    }
    a[i] = value;
  }
  pop(): number | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const r = l + 1;
        const c = r < a.length && a[r]! < a[l]! ? r : l;
        if (a[c]! >= last) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

/**
 * Buckets of keys per expiry second. A key is listed in exactly one bucket, never later than its real expiry
 * second: callers move it earlier at once (moveEarlier) but leave it in place when its TTL is extended, and the
 * sweep re-lists such keys when their old bucket comes due. That keeps the per-hit cost at a field write for
 * the common case (TTL refreshed on every hit) while a sweep only touches keys whose bucket is due.
 */
export class ExpiryQueue {
  private readonly buckets = new Map<number, Set<string>>();
  private readonly order = new MinHeap();

  /** Lists key in bucket `second`. */
  add(key: string, second: number): void {
    let set = this.buckets.get(second);
    if (set === undefined) {
      set = new Set();
      this.buckets.set(second, set);
      this.order.push(second);
    }
    set.add(key);
  }

  remove(key: string, second: number): void {
    const set = this.buckets.get(second);
    if (set === undefined) return;
    set.delete(key);
    if (set.size === 0) this.buckets.delete(second);
  }

  /** The earliest bucket second that still has keys, or undefined. */
  earliest(): number | undefined {
    for (;;) {
      const second = this.order.peek();
      if (second === undefined) return undefined;
      if (this.buckets.has(second)) return second;
      // The bucket emptied after it was queued.
      this.order.pop();
    }
  }

  /** The keys of bucket `second` (live view; callers may remove/move keys while iterating a copy). */
  keysOf(second: number): readonly string[] {
    const set = this.buckets.get(second);
    return set === undefined ? [] : [...set];
  }
}
