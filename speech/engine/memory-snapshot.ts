// A sparse copy of a WebAssembly memory (only its non-zero pages), restored to reset an instance between jobs.

const PAGE_BYTES = 4096;

export interface MemorySnapshot {
  /** Length of the memory when the snapshot was taken. */
  readonly length: number;
  /** Offsets and contents of the pages that held at least one non-zero byte. */
  readonly pages: readonly { readonly offset: number; readonly bytes: Uint8Array }[];
}

/** Copies the non-zero pages of `heap` (espeak's 17 MB memory has about 1 MB of them after start-up). */
export function takeSnapshot(heap: Uint8Array): MemorySnapshot {
  const pages: { offset: number; bytes: Uint8Array }[] = [];
  for (let offset = 0; offset < heap.length; offset += PAGE_BYTES) {
    const end = Math.min(offset + PAGE_BYTES, heap.length);
    for (let i = offset; i < end; i += 1) {
      if (heap[i] !== 0) {
        pages.push({ offset, bytes: heap.slice(offset, end) });
        break;
      }
    }
  }
  return { length: heap.length, pages };
}

/** Makes `heap` equal to the snapshot again; bytes beyond the snapshot's length (memory growth) become zero. */
export function restoreSnapshot(snapshot: MemorySnapshot, heap: Uint8Array): void {
  heap.fill(0);
  for (const page of snapshot.pages) heap.set(page.bytes, page.offset);
}
