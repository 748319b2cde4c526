// The core ClusterFeature, the core ResourceSyncRules and the reader Secret as upstream's own
// controller writes them into a real cluster, against what ours writes: a mixed group only
// propagates if both write the same objects.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { coreClusterFeature, coreResourceSyncRules } from '../../src/core/api/core-rules.ts';
import { CLUSTER_SECRET, LABEL_TRUE, LABELS, WELL_KNOWN } from '../../src/core/api/keys.ts';
import { CLUSTER_FEATURES, CLUSTERS, RESOURCE_SYNC_RULES, SECRETS, secretText, type Resource, type Secret } from '../../src/core/api/resources.ts';
import type { Cluster, KubeObject } from '../../src/core/api/types.ts';
import { mergeCABundles, readerKubeconfig } from '../../src/core/registry/index.ts';
import type { RestClient } from '../../src/kube/index.ts';
import { installRegistry } from '../../src/registry/install.ts';
import { startSandbox, type Component, type Sandbox, type SandboxCluster } from '../../src/sandbox/index.ts';
import { adminClient } from '../../src/testbed/group.ts';
import { eventually } from '../support/eventually.ts';
import { startUpstreamController } from '../support/upstream.ts';

// deploy/manifests' namespace, where the reader ServiceAccount is.
const NAMESPACE = 'cluster-registry';
const CORE_SELECTOR = `${LABELS.coreSyncResource}=${LABEL_TRUE}`;

/** What both implementations must agree on: the name, the labels and the whole spec. */
const contract = (o: KubeObject) => ({ name: o.metadata.name, labels: o.metadata.labels ?? {}, spec: o['spec'] });

describe('core objects as upstream v0.2.12 writes them', () => {
  let sandbox: Sandbox | undefined;
  let cluster: SandboxCluster;
  let rest: RestClient | undefined;
  let upstream: Component | undefined;
  const client = (): RestClient => rest ?? assert.fail('no client: the sandbox did not start');

  /** The object as the API server would store it (pruned by the installed CRD), under its own name. */
  const asStored = async (ref: Resource, obj: KubeObject): Promise<KubeObject> => {
    const name = obj.metadata.name ?? '';
    const stored = await client().create(ref, undefined, { ...obj, metadata: { ...obj.metadata, name: `${name}-dry-run` } }, { dryRun: true });
    return { ...stored, metadata: { ...stored.metadata, name } };
  };
  /** Waits for upstream to write the core objects of a kind; fails with its log tail if it does not. */
  const upstreamCore = (ref: Resource, count: number) =>
    eventually(`upstream to create ${count} core ${ref.resource}`, async () => {
      const { items } = await client().list(ref, { labelSelector: CORE_SELECTOR });
      return items.length >= count && items;
    }, 120_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\nupstream log tail:\n${upstream?.process.logTail() ?? ''}`);
    });

  before(async () => {
    sandbox = await startSandbox({ names: ['upstream'] });
    cluster = sandbox.cluster('upstream');
    rest = await adminClient(cluster);
    await installRegistry(rest);
    upstream = await startUpstreamController(sandbox, cluster, { namespace: NAMESPACE });
  });
  after(async () => {
    await upstream?.stop();
    rest?.close();
    await sandbox?.stop();
  });

  it('the core ClusterFeature equals coreClusterFeature()', async () => {
    const got = await upstreamCore(CLUSTER_FEATURES, 1);
    assert.deepEqual(got.map(contract), [contract(await asStored(CLUSTER_FEATURES, coreClusterFeature()))]);
  });

  it('the core ResourceSyncRules equal coreResourceSyncRules(namespace)', async () => {
    const got = await upstreamCore(RESOURCE_SYNC_RULES, 3);
    const byName = (a: { name?: string | undefined }, b: { name?: string | undefined }) => (a.name ?? '').localeCompare(b.name ?? '');
    const ours = await Promise.all(coreResourceSyncRules(NAMESPACE).map((r) => asStored(RESOURCE_SYNC_RULES, r)));
    assert.deepEqual(got.map(contract).sort(byName), ours.map(contract).sort(byName));
  });

  it('the reader Secret has our type, key and kubeconfig layout', async () => {
    const local = await client().get<Cluster>(CLUSTERS, undefined, cluster.name);
    const ref = local.spec.authInfo?.secretRef ?? assert.fail('upstream provisioned a Cluster without a secretRef');
    assert.deepEqual(ref, { name: cluster.name, namespace: NAMESPACE });
    const secret = await eventually('upstream to write the reader Secret', () => client().get<Secret>(SECRETS, ref.namespace, ref.name));
    assert.equal(secret.type, CLUSTER_SECRET.type);
    assert.deepEqual(Object.keys(secret.data ?? {}), [CLUSTER_SECRET.kubeconfigKey]);

    const theirs = parse(secretText(secret, CLUSTER_SECRET.kubeconfigKey) ?? '') as {
      clusters: { cluster: { server: string } }[];
      users: { user: { token: string } }[];
    };
    const token = theirs.users[0]?.user.token ?? '';
    assert.ok(token.length > 0, 'upstream wrote no reader token');
    // Ours with upstream's server and token (ours mints its own token and finds the server the
    // same way) and the CA ours trusts: everything else must be the same, field for field.
    const ours = readerKubeconfig({
      clusterName: local.metadata.name ?? '',
      userName: WELL_KNOWN.readerServiceAccountName,
      server: theirs.clusters[0]?.cluster.server ?? '',
      caPem: mergeCABundles(cluster.caPem),
      token,
    });
    assert.deepEqual(theirs, parse(ours));
  });
});
