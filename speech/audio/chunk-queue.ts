// A single-consumer async queue: producers push synchronously, one consumer iterates; used to stream encoder output.

/**
 * Values pushed before `end()` are yielded in order; `fail(err)` makes the iterator throw after the values
 * already queued. Iterating twice is not supported.
 */
export class ChunkQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private done = false;
  private error: unknown = undefined;
  private failed = false;
  private wake: (() => void) | undefined;

  push(item: T): void {
    if (this.done) return;
    this.items.push(item);
    this.notify();
  }

  end(): void {
    this.done = true;
    this.notify();
  }

  fail(error: unknown): void {
    if (this.done) return;
    this.error = error;
    this.failed = true;
    this.done = true;
    this.notify();
  }

  get ended(): boolean {
    return this.done;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.done) {
        if (this.failed) throw this.error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}
