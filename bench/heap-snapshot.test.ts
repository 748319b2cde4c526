// The heap snapshot summary against a snapshot of this very process: objects we made, counted
// under their constructor and under what retains them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import { growth, summariseHeapSnapshot } from './heap-snapshot.ts';

class PeerCostProbe {
  readonly payload: string;
  constructor(i: number) {
    this.payload = `probe-${i}`;
  }
}

describe('heap snapshot summary', () => {
  it('counts objects by constructor and by first retainer, and the growth between two snapshots', () => {
    const dir = mkdtempSync(join(tmpdir(), 'heap-'));
    try {
      const before = summariseHeapSnapshot(v8.writeHeapSnapshot(join(dir, 'before.heapsnapshot')));
      const held = new Map<number, PeerCostProbe>();
      for (let i = 0; i < 5000; i++) held.set(i, new PeerCostProbe(i));
      const after = summariseHeapSnapshot(v8.writeHeapSnapshot(join(dir, 'after.heapsnapshot')));
      // The class and its prototype carry the name too: what grew is the instances.
      assert.equal((after.byKind.get('PeerCostProbe')?.count ?? 0) - (before.byKind.get('PeerCostProbe')?.count ?? 0), 5000);
      assert.ok(after.totalBytes > before.totalBytes);
      // Held by the Map through its backing table: named after the Map, not the table.
      const retained = [...after.byRetainer].filter(([k, h]) => k.startsWith('PeerCostProbe <- ') && h.count >= 5000);
      assert.deepEqual(
        retained.map(([k]) => k),
        ['PeerCostProbe <- Map.table'],
      );
      const grew = growth(before.byKind, after.byKind, 5000, 50);
      const probe = grew.find((g) => g.key === 'PeerCostProbe');
      assert.equal(probe?.count, 1);
      // Held until after the second snapshot.
      void held.size;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
