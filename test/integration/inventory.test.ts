// SIG-Multicluster's view of the group, on two real clusters serving its CRDs (installed from the
// SIG's own modules): each member's ID as an About API ClusterProperty, a different one already
// there reported and kept, and every member as a ClusterProfile with its health, version and
// properties, following a member that goes down and comes back.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { CLUSTERS } from '../../src/core/api/resources.ts';
import type { Cluster, KubeObject } from '../../src/core/api/types.ts';
import { CLUSTER_ID_PROPERTY, CLUSTER_MANAGER_LABEL, type ClusterProfile } from '../../src/core/registry/index.ts';
import { kubeSystemUID } from '../../src/peers/identity.ts';
import { toolPath } from '../../src/sandbox/index.ts';
import { SANDBOX_NAMESPACE, startController, startGroup } from '../../src/testbed/group.ts';
import { applyObjects } from '../../src/registry/install.ts';
import type { ResourceRef, RestClient } from '../../src/kube/index.ts';
import { eventually } from '../support/eventually.ts';
import { freshLogDir, getOrUndefined, groupOver, waitGroupFormed, type SyncGroup } from '../support/sync-helpers.ts';
import { join as joinClusters } from '../../src/ops/join.ts';

const PROPERTIES: ResourceRef = { group: 'about.k8s.io', version: 'v1alpha1', resource: 'clusterproperties' };
const PROFILES: ResourceRef = { group: 'multicluster.x-k8s.io', version: 'v1alpha1', resource: 'clusterprofiles' };

/** The SIG's CRDs as its modules ship them (tools/build.sh sig-crds), installed and served. */
async function installSigCRDs(rest: RestClient): Promise<void> {
  const dir = toolPath('sig-crds');
  const crds = readdirSync(dir).map((f) => parse(readFileSync(join(dir, f), 'utf8')) as KubeObject);
  // The About API's CRD at this commit lacks the approval the API server requires of a *.k8s.io
  // group (later commits carry it); its schema is the SIG's, the annotation names the KEP.
  for (const crd of crds) if (crd.metadata.name?.endsWith('.k8s.io')) crd.metadata.annotations = { ...crd.metadata.annotations, 'api-approved.kubernetes.io': 'https://github.com/kubernetes/enhancements/tree/master/keps/sig-multicluster/2149-clusterid' };
  await applyObjects(rest, crds);
  for (const r of [PROPERTIES, PROFILES]) await eventually(`${r.resource} served`, async () => (await rest.list(r)).items);
}

describe('SIG-Multicluster inventory (2 clusters serving its APIs)', () => {
  let g: SyncGroup;

  before(async () => {
    // The APIs are there before the controllers start, as on a cluster that already runs the SIG's tools.
    const sandbox = await startGroup({ dir: freshLogDir('inventory'), clusters: 2, controllers: false });
    g = await groupOver(sandbox, async (group) => {
      for (const c of group.names) await installSigCRDs(group.client(c));
      // cluster2 already has an ID of another tool's making.
      await group.client('cluster2').create(PROPERTIES, undefined, { apiVersion: 'about.k8s.io/v1alpha1', kind: 'ClusterProperty', metadata: { name: CLUSTER_ID_PROPERTY }, spec: { value: 'made-by-another-tool' } });
      for (const c of sandbox.clusters) await startController(sandbox, c, { controllerArgs: () => ['--peer-health-interval=1s'] });
      await joinClusters({ rest: group.client('cluster1'), label: 'cluster1' }, { rest: group.client('cluster2'), label: 'cluster2' }, { namespace: SANDBOX_NAMESPACE, timeoutMs: 120_000, progress: () => undefined });
    });
    await waitGroupFormed(g);
  });
  after(async () => {
    await g?.stop();
  });

  it("publishes this cluster's ID where none was, and reports another one without replacing it", async () => {
    const id1 = await kubeSystemUID(g.client('cluster1'));
    const property = await eventually('the ID property on cluster1', () => getOrUndefined<KubeObject & { spec?: { value?: string } }>(g.client('cluster1'), PROPERTIES, undefined, CLUSTER_ID_PROPERTY));
    assert.equal(property.spec?.value, id1);
    const condition = (c: string) =>
      eventually(`the ID property condition on ${c}`, async () => (await g.client(c).get<Cluster>(CLUSTERS, undefined, c)).status?.conditions?.find((x) => x.type === 'ClusterIDPropertyConsistent'));
    assert.equal((await condition('cluster1')).status, 'True');
    const mismatch = await condition('cluster2');
    assert.equal(mismatch.status, 'False');
    assert.match(mismatch.message ?? '', /holds "made-by-another-tool", but the group knows this cluster by its kube-system UID/);
    const kept = await g.client('cluster2').get<KubeObject & { spec?: { value?: string } }>(PROPERTIES, undefined, CLUSTER_ID_PROPERTY);
    assert.equal(kept.spec?.value, 'made-by-another-tool', 'the other tool keeps its value');
    const cluster2 = await g.client('cluster1').get<Cluster>(CLUSTERS, undefined, 'cluster2');
    assert.equal(cluster2.status?.state, 'Ready', 'and the group goes on by the kube-system UID');
  });

  it('publishes every member as a ClusterProfile with its health, version and ID, following its health', async () => {
    const profile = (on: string, name: string) => getOrUndefined<ClusterProfile>(g.client(on), PROFILES, SANDBOX_NAMESPACE, name);
    const healthy = (p: ClusterProfile | undefined) => p?.status?.conditions.find((c) => c.type === 'ControlPlaneHealthy')?.status;
    for (const on of g.names) {
      for (const member of g.names) {
        const p = await eventually(`${member}'s profile on ${on}`, async () => {
          const found = await profile(on, member);
          return healthy(found) === 'True' ? found : undefined;
        });
        assert.equal(p.metadata.labels?.[CLUSTER_MANAGER_LABEL], 'cluster-registry');
        assert.deepEqual(p.spec, { displayName: member, clusterManager: { name: 'cluster-registry' } });
        assert.equal(p.status?.properties.find((x) => x.name === CLUSTER_ID_PROPERTY)?.value, await kubeSystemUID(g.client(member)));
        assert.match(p.status?.version?.kubernetes ?? '', /^v1\.\d+/);
      }
    }
    const apiserver = g.sandbox.cluster('cluster2').apiserver;
    apiserver.pause();
    try {
      await eventually("cluster2's profile on cluster1 to say it is not healthy", async () => healthy(await profile('cluster1', 'cluster2')) === 'False');
    } finally {
      apiserver.resume();
    }
    await eventually("cluster2's profile on cluster1 healthy again", async () => healthy(await profile('cluster1', 'cluster2')) === 'True', 90_000);
  });
});
