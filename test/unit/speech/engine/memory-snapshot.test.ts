import { expect } from 'chai';
import { restoreSnapshot, takeSnapshot } from '../../../../speech/engine/memory-snapshot.js';

describe('memory snapshot', () => {
  it('keeps only non-zero pages and restores the exact bytes', () => {
    const heap = new Uint8Array(5 * 4096 + 100);
    heap[10] = 1;
    heap[3 * 4096 + 7] = 2;
    heap[5 * 4096 + 99] = 3;
    const original = heap.slice();
    const snapshot = takeSnapshot(heap);
    expect(snapshot.pages.map((p) => p.offset)).to.deep.equal([0, 3 * 4096, 5 * 4096]);
    heap.fill(9, 4000, 9000);
    heap[10] = 0;
    restoreSnapshot(snapshot, heap);
    expect(Buffer.from(heap).equals(Buffer.from(original))).to.equal(true);
  });

  it('zeroes memory that grew after the snapshot', () => {
    const small = new Uint8Array(4096);
    small[1] = 5;
    const snapshot = takeSnapshot(small);
    const grown = new Uint8Array(3 * 4096).fill(7);
    restoreSnapshot(snapshot, grown);
    expect(grown[1]).to.equal(5);
    expect(grown[0]).to.equal(0);
    expect(grown.subarray(4096).every((b) => b === 0)).to.equal(true);
  });
});
