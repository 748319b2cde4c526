import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { registry } from '../kube/index.ts';
import { StageClock, type SyncStage } from './stages.ts';

/** Sum (seconds) and count the stage histogram holds for each stage. */
async function observed(): Promise<Map<SyncStage, { sum: number; count: number }>> {
  const values = (await registry.getSingleMetric('cluster_registry_sync_stage_seconds')?.get())?.values ?? [];
  const by = new Map<SyncStage, { sum: number; count: number }>();
  for (const v of values) {
    const stage = v.labels['stage'] as SyncStage;
    const entry = by.get(stage) ?? { sum: 0, count: 0 };
    const name = (v as { metricName?: string }).metricName;
    if (name === 'cluster_registry_sync_stage_seconds_sum') entry.sum = v.value;
    if (name === 'cluster_registry_sync_stage_seconds_count') entry.count = v.value;
    by.set(stage, entry);
  }
  return by;
}

describe('StageClock', () => {
  it('times each stage from its start to the next one, once per stage entered', async () => {
    const before = await observed();
    let t = 100;
    const clock = new StageClock(() => t);
    t = 102;
    clock.enter('write');
    t = 105;
    // Entering the stage it is in changes nothing (a second write of one reconcile).
    clock.enter('write');
    t = 107;
    clock.enter('record');
    t = 108;
    clock.end();
    const after = await observed();
    const added = (s: SyncStage) => ({ sum: Math.round(((after.get(s)?.sum ?? 0) - (before.get(s)?.sum ?? 0)) * 1e6) / 1e3, count: (after.get(s)?.count ?? 0) - (before.get(s)?.count ?? 0) });
    assert.deepEqual(added('decide'), { sum: 2, count: 1 });
    assert.deepEqual(added('write'), { sum: 5, count: 1 });
    assert.deepEqual(added('record'), { sum: 1, count: 1 });
  });

  it('counts a reconcile that never wrote as deciding only', async () => {
    const before = await observed();
    let t = 0;
    const clock = new StageClock(() => t);
    t = 3;
    clock.end();
    const after = await observed();
    assert.equal((after.get('decide')?.count ?? 0) - (before.get('decide')?.count ?? 0), 1);
    assert.equal((after.get('write')?.count ?? 0) - (before.get('write')?.count ?? 0), 0);
  });
});
