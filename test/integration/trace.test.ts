// `cluster-registry trace` on three real clusters, each with its controller: one ConfigMap made on
// cluster2 and copied to the others by a rule made on cluster1 (driftPolicy Report), traced from
// its source, from a copy, with a copy edited where it is, with a member's API server stopped, with a
// rule gated on features, and with its source deleted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ResourceRef } from '../../src/kube/index.ts';
import type { Trace, TraceRow } from '../../src/ops/trace-rows.ts';
import { eventually } from '../support/eventually.ts';
import { kubectlOk } from '../support/kubectl.ts';
import { cli } from '../support/process.ts';
import { RULES, ensureNamespace, getOrUndefined, grantKinds, rule, startSyncGroup, waitGroupFormed, type SyncGroup } from '../support/sync-helpers.ts';

const ALL = ['cluster1', 'cluster2', 'cluster3'];
const CONFIGMAPS: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };
const NS = 'traced';

describe('trace (3 clusters)', () => {
  let g: SyncGroup;
  const trace = async (on: string, name: string, ...args: string[]) => {
    const r = await cli(['trace', 'configmap', name, '-n', NS, '--kubeconfig', g.sandbox.cluster(on).kubeconfigPath, ...args]);
    return { ...r, trace: args.includes('json') && r.stdout ? (JSON.parse(r.stdout) as Trace) : undefined };
  };
  const row = (t: Trace | undefined, member: string): TraceRow | undefined => t?.rows.find((r) => r.member === member);

  before(async () => {
    g = await startSyncGroup(3, { name: 'trace' });
    await waitGroupFormed(g);
    await grantKinds(g, 'configmaps', '', ['configmaps']);
    for (const c of ALL) await ensureNamespace(g.client(c), NS);
    await g.client('cluster2').create(CONFIGMAPS, NS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: NS }, data: { k: 'v' } });
    await g.client('cluster1').create(RULES, undefined, rule('traced-sink', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [NS] }] }], driftPolicy: 'Report' }));
    for (const c of ['cluster1', 'cluster3']) await eventually(`the copy on ${c}`, () => getOrUndefined(g.client(c), CONFIGMAPS, NS, 'app'), 90_000);
  });
  after(async () => {
    await g?.stop();
  });

  it('on a source: every member listed, each copy in sync with the rule and source version it was written from', async () => {
    const { code, trace: t, stderr } = await eventually('every copy in sync', async () => {
      const r = await trace('cluster2', 'app', '-o', 'json');
      return r.code === 0 ? r : undefined;
    });
    assert.equal(code, 0, stderr);
    assert.deepEqual(t?.source && { member: t.source.member, object: t.source.object }, { member: 'cluster2', object: `ConfigMap ${NS}/app` });
    assert.deepEqual(
      t?.rows.map((r) => [r.member, r.seen, r.state, r.rule]),
      [
        ['cluster1', 'inferred', 'in sync', 'traced-sink'],
        ['cluster2', 'first-hand', 'source', '-'],
        ['cluster3', 'inferred', 'in sync', 'traced-sink'],
      ],
    );
    for (const m of ['cluster1', 'cluster3']) {
      assert.equal(row(t, m)?.sourceVersion, t?.source?.version, `${m}'s copy was written from the source as it is`);
      assert.equal(row(t, m)?.lastWrite?.manager, 'cluster-registry-sync');
    }
  });

  it('on a copy: names its source member and the rule that made it', async () => {
    const { code, stdout, stderr } = await trace('cluster3', 'app');
    assert.equal(code, 0, stdout + stderr);
    assert.match(stdout, new RegExp(`^ConfigMap ${NS}/app on cluster3: its source is ConfigMap ${NS}/app on cluster2, at version \\d+$`, 'm'));
    assert.match(stdout, new RegExp(`^cluster3\\s+first-hand\\s+ConfigMap ${NS}/app\\s+traced-sink\\s+in sync\\s`, 'm'));
    assert.match(stdout, /^cluster2\s+inferred\s+\S+ \S+\s+-\s+source\s/m);
  });

  it('a copy edited where it is: drifted, with the field and who edited it, never its value', async () => {
    await kubectlOk(g.sandbox.cluster('cluster3').kubeconfigPath, ['-n', NS, 'patch', 'configmap', 'app', '--type', 'merge', '-p', '{"data":{"k":"hand-edited"}}', '--field-manager', 'hotfix']);
    const { code, trace: t, stdout } = await eventually('cluster3 said drifted', async () => {
      const r = await trace('cluster1', 'app', '-o', 'json');
      return row(r.trace, 'cluster3')?.state === 'drifted' ? r : undefined;
    });
    assert.equal(code, 2, 'exit 2: a copy is not in sync');
    assert.deepEqual(
      row(t, 'cluster3')?.drift?.map((d) => [d.field, d.change, d.manager]),
      [['data.k', 'changed', 'hotfix']],
    );
    assert.match(row(t, 'cluster3')?.reason ?? '', /^edited there, not at its source: data\.k \(changed by hotfix, Update, at .*\); Report: left as edited, and marked$/);
    assert.equal(row(t, 'cluster1')?.state, 'in sync', 'the other copy is not concerned');
    assert.doesNotMatch(stdout, /hand-edited/, 'what the field holds is never said');
  });

  it("with a peer down: that peer named with why, the rest traced; read again once it is back", async () => {
    const apiserver = g.sandbox.cluster('cluster3').apiserver;
    apiserver.pause();
    try {
      const { code, trace: t } = await trace('cluster1', 'app', '-o', 'json');
      assert.equal(code, 3, 'exit 3: a member could not be read');
      assert.equal(row(t, 'cluster3')?.state, 'not read');
      assert.match(row(t, 'cluster3')?.reason ?? '', /timed out/);
      assert.equal(row(t, 'cluster1')?.state, 'in sync');
      assert.equal(row(t, 'cluster2')?.state, 'source');
    } finally {
      apiserver.resume();
    }
    const back = await eventually('cluster3 read again', async () => {
      const r = await trace('cluster1', 'app', '-o', 'json');
      return row(r.trace, 'cluster3')?.state === 'drifted' ? r : undefined;
    });
    assert.equal(back.code, 2);
  });

  it('a rule gated on ClusterFeatures the source member does not advertise: named, with why', async () => {
    await g.client('cluster1').create(RULES, undefined, rule('traced-gated', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, clusterFeatureMatch: [{ featureName: 'traced-nowhere' }], rules: [{ match: [{ namespaces: [NS] }] }] }));
    try {
      const { trace: t } = await eventually('the gated rule named', async () => {
        const r = await trace('cluster2', 'app', '-o', 'json');
        return r.trace?.rows.some((x) => x.member === 'cluster1' && x.rule === 'traced-gated') ? r : undefined;
      });
      const gated = t?.rows.find((x) => x.member === 'cluster1' && x.rule === 'traced-gated');
      assert.equal(gated?.state, 'no copy');
      assert.match(gated?.reason ?? '', /only from members that advertise the ClusterFeatures its clusterFeatureMatch names, and cluster2 does not/);
      assert.equal(t?.rows.find((x) => x.member === 'cluster1' && x.rule === 'traced-sink')?.state, 'in sync', 'the rule that takes it still said');
    } finally {
      await g.client('cluster1').delete(RULES, undefined, 'traced-gated');
    }
  });

  it('a source deleted: said gone, a copy its member has not deleted yet (its controller stopped) stale, the others no copy', async () => {
    await g.client('cluster2').create(CONFIGMAPS, NS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'doomed', namespace: NS }, data: { k: 'v' } });
    for (const c of ['cluster1', 'cluster3']) await eventually(`the copy of doomed on ${c}`, () => getOrUndefined(g.client(c), CONFIGMAPS, NS, 'doomed'), 90_000);
    const controller = g.sandbox.cluster('cluster3').extras[0] ?? assert.fail('no controller in cluster3');
    controller.pause();
    try {
      await g.client('cluster2').delete(CONFIGMAPS, NS, 'doomed');
      await eventually("cluster1's copy deleted", async () => (await getOrUndefined(g.client('cluster1'), CONFIGMAPS, NS, 'doomed')) === undefined || undefined, 90_000);
      const { code, trace: t, stderr } = await trace('cluster3', 'doomed', '-o', 'json');
      assert.ok(t, stderr);
      assert.equal(row(t, 'cluster2')?.state, 'gone', JSON.stringify(t.rows));
      assert.equal(row(t, 'cluster3')?.state, 'stale');
      assert.match(row(t, 'cluster3')?.reason ?? '', /a copy of a source that is gone: its sync deletes it/);
      assert.equal(row(t, 'cluster1')?.state, 'no copy', JSON.stringify(t.rows));
      assert.equal(code, 2, 'a copy left of a source that is gone is not as its source says');
    } finally {
      controller.resume();
    }
    await eventually("cluster3's copy deleted once its controller runs again", async () => (await getOrUndefined(g.client('cluster3'), CONFIGMAPS, NS, 'doomed')) === undefined || undefined, 90_000);
  });
});
