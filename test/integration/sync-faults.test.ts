// The sync under faults, on four real clusters joined around cluster1: a partitioned owner loses
// none of its copies and the group converges when it comes back (a delete made meanwhile
// included); copies of a dead owner with three live members, and concurrent edits, settle with a
// bounded number of writes, counted by watching the API servers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLUSTERS, SECRETS, type Secret } from '../../src/core/api/resources.ts';
import type { Cluster } from '../../src/core/api/types.ts';
import type { KubeObject, RestClient } from '../../src/kube/index.ts';
import { eventually } from '../support/eventually.ts';
import { controllerMetric } from '../support/registry.ts';
import { resumingWatch, type ResumingWatch } from '../support/resuming-watch.ts';
import { OWNER, RULES, SANDBOX_NAMESPACE, getOrUndefined, rule, secret, startSyncGroup, waitGone, waitGroupFormed, waitSecretValue, type SyncGroup } from '../support/sync-helpers.ts';

const NS = SANDBOX_NAMESPACE;

/**
 * Counts the writes the API server of one cluster sees to one object, from now on. A read waits
 * until the watch has caught up with the object as the API server has it now: a watch runs behind
 * (and pauses after one that ended at once), and a count that lags would pass an upper bound wrongly.
 */
class WriteCounter {
  private writes = 0;
  /** The object's version in the last event taken (or as listed at the start). */
  private seen: string | undefined;
  private watch: ResumingWatch | undefined;
  /** Why it stopped counting before stop(): a count read after that would say too little. */
  private failure: unknown;

  private readonly rest: RestClient;
  private readonly name: string;

  private constructor(rest: RestClient, name: string) {
    this.rest = rest;
    this.name = name;
  }

  /** The writes so far, once every write the API server has made to the object is counted. */
  async count(): Promise<number> {
    const now = (await getOrUndefined(this.rest, SECRETS, NS, this.name))?.metadata.resourceVersion;
    await eventually(`the write counter of ${this.name} to reach version ${now}`, () => this.failure !== undefined || this.seen === now, 30_000);
    if (this.failure !== undefined) throw new Error('the write counter stopped watching', { cause: this.failure });
    return this.writes;
  }

  static async start(rest: RestClient, name: string): Promise<WriteCounter> {
    const c = new WriteCounter(rest, name);
    const fieldSelector = `metadata.name=${name}`;
    const list = await rest.list(SECRETS, { namespace: NS, fieldSelector });
    c.seen = list.items[0]?.metadata.resourceVersion;
    c.watch = await resumingWatch(rest, SECRETS, { namespace: NS, fieldSelector, resourceVersion: list.metadata.resourceVersion ?? '' }, (type, obj) => {
      c.writes++;
      c.seen = type === 'DELETED' ? undefined : obj.metadata.resourceVersion;
    });
    void c.watch.ended.then((err) => (c.failure = err));
    return c;
  }

  stop(): void {
    this.watch?.close();
  }
}

function notReady(g: SyncGroup, viewer: string, peer: string): Promise<true> {
  return eventually(`${viewer} to see ${peer} not Ready`, async () => ((await g.client(viewer).get<Cluster>(CLUSTERS, undefined, peer)).status?.state !== 'Ready') || undefined, 60_000);
}

function readyAgain(g: SyncGroup, viewer: string, peer: string): Promise<true> {
  return eventually(`${viewer} to see ${peer} Ready`, async () => ((await g.client(viewer).get<Cluster>(CLUSTERS, undefined, peer)).status?.state === 'Ready') || undefined, 90_000);
}

describe('resource sync under faults (4 clusters)', () => {
  let g: SyncGroup;
  const members = ['cluster1', 'cluster2', 'cluster3', 'cluster4'];

  before(async () => {
    g = await startSyncGroup(4, { name: 'sync-faults' });
    await waitGroupFormed(g);
    await g.client('cluster1').create(RULES, undefined, rule('faults-sink', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: { fault: 'test' } }] }] }] }));
  });
  after(async () => {
    await g?.stop();
  });

  it('deletes nothing while an owner is partitioned, and converges when it is back, a delete made meanwhile included', async () => {
    const labels = { fault: 'test' };
    await g.client('cluster3').create(SECRETS, NS, secret(NS, 'partitioned-owner', { k: 'v1' }, { labels }));
    await g.client('cluster2').create(SECRETS, NS, secret(NS, 'deleted-meanwhile', { k: 'v' }, { labels }));
    for (const c of members) {
      if (c !== 'cluster3') await waitSecretValue(g, c, NS, 'partitioned-owner', 'k', 'v1');
      if (c !== 'cluster2') await waitSecretValue(g, c, NS, 'deleted-meanwhile', 'k', 'v');
    }
    const apiserver = g.sandbox.cluster('cluster3').apiserver;
    apiserver.pause();
    try {
      for (const c of ['cluster1', 'cluster2', 'cluster4']) await notReady(g, c, 'cluster3');
      await g.client('cluster2').delete(SECRETS, NS, 'deleted-meanwhile');
      // Someone deletes a copy of the partitioned owner's object: it comes back only from the owner.
      await g.client('cluster4').delete(SECRETS, NS, 'partitioned-owner');
      // The delete reaches those that can hear of it: proof the sync (and its collector) kept running.
      for (const c of ['cluster1', 'cluster4']) await waitGone(g, c, SECRETS, NS, 'deleted-meanwhile');
      // Each member's collector looks at every copy about once a second: more sweeps than the
      // 4 s grace period takes must pass with the copy kept.
      for (const c of ['cluster1', 'cluster2']) {
        const before = await controllerMetric(g.sandbox, c, 'cluster_registry_orphan_sweeps_total');
        await eventually(`${c}'s collector to sweep past a grace period while cluster3 is away`, async () => {
          const swept = (await controllerMetric(g.sandbox, c, 'cluster_registry_orphan_sweeps_total')) - before;
          return (swept >= 6 && (await controllerMetric(g.sandbox, c, 'cluster_registry_copies', { fate: 'orphan' })) === 0) || undefined;
        });
        assert.ok(await getOrUndefined(g.client(c), SECRETS, NS, 'partitioned-owner'), `${c} kept the partitioned owner's copy`);
        assert.equal(await controllerMetric(g.sandbox, c, 'cluster_registry_orphans_collected_total'), 0, `${c} collected nothing`);
      }
    } finally {
      apiserver.resume();
    }
    for (const c of ['cluster1', 'cluster2', 'cluster4']) await readyAgain(g, c, 'cluster3');
    await waitSecretValue(g, 'cluster4', NS, 'partitioned-owner', 'k', 'v1');
    // cluster3 missed the delete: it finds it on its own (relist and anti-entropy).
    await waitGone(g, 'cluster3', SECRETS, NS, 'deleted-meanwhile', 90_000);
    const src = await g.client('cluster3').get<Secret>(SECRETS, NS, 'partitioned-owner');
    await g.client('cluster3').update(SECRETS, NS, { ...src, data: { k: Buffer.from('v2').toString('base64') } });
    for (const c of ['cluster1', 'cluster2', 'cluster4']) await waitSecretValue(g, c, NS, 'partitioned-owner', 'k', 'v2');
  });

  it('settles concurrent edits of copies on two members: each is put back, then no one writes again', async () => {
    await g.client('cluster4').create(SECRETS, NS, secret(NS, 'edited-twice', { k: 'truth' }, { labels: { fault: 'test' } }));
    for (const c of ['cluster1', 'cluster2', 'cluster3']) await waitSecretValue(g, c, NS, 'edited-twice', 'k', 'truth');
    const edit = async (c: string, i: number): Promise<void> => {
      const s = await g.client(c).get<Secret>(SECRETS, NS, 'edited-twice');
      await g.client(c).update(SECRETS, NS, { ...s, data: { k: Buffer.from(`${c}-${i}`).toString('base64') } }).catch(() => undefined);
    };
    await Promise.all([0, 1, 2, 3, 4].flatMap((i) => [edit('cluster1', i), edit('cluster2', i)]));
    for (const c of ['cluster1', 'cluster2']) await waitSecretValue(g, c, NS, 'edited-twice', 'k', 'truth');
    const counters = await Promise.all(['cluster1', 'cluster2', 'cluster3'].map((c) => WriteCounter.start(g.client(c), 'edited-twice')));
    try {
      // A marker change at the owner: once every copy has it, anything queued before it has run too.
      const src = await g.client('cluster4').get<Secret>(SECRETS, NS, 'edited-twice');
      await g.client('cluster4').update(SECRETS, NS, { ...src, data: { k: Buffer.from('marker').toString('base64') } });
      for (const c of ['cluster1', 'cluster2', 'cluster3']) await waitSecretValue(g, c, NS, 'edited-twice', 'k', 'marker');
      // One write each for the marker; the first change after a copy's creation also moves its
      // fields from the create's managedFields entry into our apply entry (one more write, once).
      for (const [i, c] of counters.entries()) {
        const n = await c.count();
        assert.ok(n >= 1 && n <= 2, `copy ${i + 1} written ${n} times for one change`);
      }
    } finally {
      for (const c of counters) c.stop();
    }
  });

  it('lets a dead owner\'s copies be kept by three live members without them rewriting each other', async () => {
    await g.client('cluster4').create(SECRETS, NS, secret(NS, 'dead-owner', { k: 'v' }, { labels: { fault: 'test' } }));
    const live = ['cluster1', 'cluster2', 'cluster3'];
    for (const c of live) await waitSecretValue(g, c, NS, 'dead-owner', 'k', 'v');
    const ownerID = (await g.client('cluster4').get<Cluster>(CLUSTERS, undefined, 'cluster4')).spec.clusterID;
    await g.sandbox.cluster('cluster4').apiserver.kill();
    for (const c of live) await notReady(g, c, 'cluster4');
    const counters = await Promise.all(live.map((c) => WriteCounter.start(g.client(c), 'dead-owner')));
    try {
      // Something changes what one copy holds: its member puts it back; the others must not join in.
      await g.client('cluster2').patch(SECRETS, NS, 'dead-owner', 'merge', { data: { k: Buffer.from('drifted').toString('base64') } });
      await waitSecretValue(g, 'cluster2', NS, 'dead-owner', 'k', 'v');
      // Ping-pong would come from the members' events and from their collectors handing the copy
      // over: let every collector look at it several times after the repair.
      const sweepsDone = async (): Promise<void> => {
        const swept = await Promise.all(live.map((c) => controllerMetric(g.sandbox, c, 'cluster_registry_orphan_sweeps_total')));
        for (const [i, c] of live.entries()) {
          await eventually(`${c}'s collector to sweep five more times`, async () => (await controllerMetric(g.sandbox, c, 'cluster_registry_orphan_sweeps_total')) - swept[i]! >= 5 || undefined);
        }
      };
      await sweepsDone();
      const writes = await Promise.all(counters.map((c) => c.count()));
      // The edit, its repair, and (the first time a copy changes after its creation) the move of
      // its fields into our apply entry. No member takes its copy over from another on that one's
      // word that it reached the owner from before the owner died.
      assert.ok(writes[1]! <= 3, `cluster2's copy was written ${writes[1]} times (the edit and its repair)`);
      assert.ok(writes[0]! === 0 && writes[2]! === 0, `cluster1 and cluster3 rewrote theirs ${writes[0]} and ${writes[2]} times`);
      // Settled: nobody writes any copy again.
      await sweepsDone();
      assert.deepEqual(
        (await Promise.all(counters.map((c) => c.count()))).map((n, i) => n - writes[i]!),
        [0, 0, 0],
        'copies written again after they settled',
      );
      for (const c of live) {
        const s = await g.client(c).get<KubeObject>(SECRETS, NS, 'dead-owner');
        assert.equal(s.metadata.annotations?.[OWNER], ownerID, `${c}'s copy still names the dead owner`);
        assert.equal(Buffer.from((s as Secret).data?.['k'] ?? '', 'base64').toString(), 'v', `${c}'s copy holds the owner's last value`);
      }
    } finally {
      for (const c of counters) c.stop();
    }
  });
});
