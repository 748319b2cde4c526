// How the registry fails, on two real joined clusters: every invalid-credential path with its
// state, message and Warning Event; a second Cluster for a member is refused while the first
// speaks; bad credentials replacing good ones close the connection;
// one failure turning into another is news; a Cluster without spec; and a controller that may
// no longer list Nodes says so instead of reporting stale metadata. Every test makes and removes
// its own objects on cluster1 and leaves the sandbox as it found it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { CLUSTERS, NODES, SECRETS, secretText, type Secret } from '../../src/core/api/resources.ts';
import type { Cluster } from '../../src/core/api/types.ts';
import { ApiError, ClusterConfig, isAlreadyExists, RestClient, type KubeObject } from '../../src/kube/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { adminClient, SANDBOX_NAMESPACE, startGroup, WEBHOOK_CONFIGURATION } from '../../src/testbed/group.ts';
import { eventually } from '../support/eventually.ts';
import { stopChecked } from '../support/security-checks.ts';
import {
  CLUSTER_API_VERSION,
  clusterWhen,
  conditionOf,
  controllerKubeconfigPath,
  controllerMetrics,
  credentialsSecret,
  deleteAll,
  hasPeerInformer,
  kubeconfigText,
  peerCluster,
  readyOf,
  warningEventFor,
  webhookEnforced,
  WEBHOOKS,
} from '../support/registry.ts';

const CLUSTER_ROLES = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' };
const CONTROLLER_ROLE = 'cluster-registry-controller';

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
}
type ClusterRole = KubeObject & { rules?: Rule[] };

describe('registry failures (2 clusters, joined)', () => {
  let sandbox: Sandbox;
  let r1: RestClient;
  /** cluster1's controller, as itself: what its RBAC lets it do. */
  let asController: RestClient;

  before(async () => {
    sandbox = await startGroup({ clusters: 2, join: true });
    r1 = await adminClient(sandbox.cluster('cluster1'));
    asController = new RestClient(await ClusterConfig.fromFile(controllerKubeconfigPath(sandbox, 'cluster1')).connection(), { maxRetries: 0 });
  });
  after(async () => {
    asController?.close();
    r1?.close();
    // With the checks every group gets: what the controllers sent and logged, what the readers may do.
    if (sandbox) await stopChecked(sandbox);
  });

  /** cluster2's reader kubeconfig and ID, as the join left them on cluster1. */
  async function peer2(): Promise<{ kubeconfig: string; clusterID: string }> {
    const secret = await r1.get<Secret>(SECRETS, SANDBOX_NAMESPACE, 'cluster2');
    const cluster = await r1.get<Cluster>(CLUSTERS, undefined, 'cluster2');
    return { kubeconfig: secretText(secret, 'kubeconfig') ?? assert.fail('no reader kubeconfig for cluster2'), clusterID: cluster.spec.clusterID };
  }

  const INVALID: readonly { name: string; title: string; state: string; message: RegExp; secret?: () => Secret }[] = [
    { name: 'no-secret-ref', title: 'no secretRef', state: 'MissingAuthInfo', message: /^spec\.authInfo\.secretRef must name the credentials Secret \(name and namespace\)$/ },
    { name: 'secret-missing', title: 'a missing Secret', state: 'InvalidAuthInfo', message: /^credentials Secret cluster-registry\/secret-missing not found$/ },
    {
      name: 'wrong-type',
      title: 'a Secret of the wrong type',
      state: 'InvalidAuthInfo',
      message: /^invalid secret type of cluster-registry\/wrong-type: Opaque \(want k8s\.cisco\.com\/cluster-registry-secret\)$/,
      secret: () => credentialsSecret('wrong-type', { kubeconfig: 'unused' }, { type: 'Opaque' }),
    },
    {
      name: 'no-kubeconfig-key',
      title: 'no kubeconfig key',
      state: 'InvalidAuthInfo',
      message: /^Secret cluster-registry\/no-kubeconfig-key has no kubeconfig key$/,
      secret: () => credentialsSecret('no-kubeconfig-key', { config: 'unused' }),
    },
    {
      name: 'unparsable',
      title: 'an unparsable kubeconfig (whose text is not quoted)',
      state: 'InvalidAuthInfo',
      message: /^invalid kubeconfig in Secret cluster-registry\/unparsable: not valid YAML \(line \d+, column \d+\)$/,
      secret: () => credentialsSecret('unparsable', { kubeconfig: 'users:\n- user: {token: "s3cr3t-marker\n' }),
    },
    {
      name: 'other-namespace',
      title: 'a Secret outside the controller namespace, which is never read',
      state: 'InvalidAuthInfo',
      message: /^spec\.authInfo\.secretRef names a Secret in namespace default: credentials are read only from the controller namespace cluster-registry$/,
      secret: () => credentialsSecret('other-namespace', { kubeconfig: 'unused' }, { namespace: 'default' }),
    },
  ];

  for (const c of INVALID) {
    it(`reports ${c.title} as ${c.state} with its reason and a Warning Event`, async () => {
      const secret = c.secret?.();
      const namespace = secret?.metadata.namespace ?? SANDBOX_NAMESPACE;
      try {
        if (secret) await r1.create(SECRETS, namespace, secret);
        const cluster = peerCluster(c.name, { clusterID: randomUUID() });
        if (c.name !== 'no-secret-ref') cluster.spec.authInfo = { secretRef: { name: c.name, namespace } };
        await r1.create(CLUSTERS, undefined, cluster);
        const failed = await clusterWhen(r1, c.name, `to be ${c.state}`, (x) => x.status?.state === c.state);
        assert.match(failed.status?.message ?? '', c.message);
        assert.equal(readyOf(failed)?.status, 'False');
        assert.equal(readyOf(failed)?.reason, 'ClusterIsNotReady');
        assert.doesNotMatch(JSON.stringify(failed.status), /s3cr3t-marker/);
        await warningEventFor(r1, c.name, c.message);
      } finally {
        await deleteAll(r1, [{ kind: 'Cluster', name: c.name }, ...(secret ? [{ kind: 'Secret' as const, name: c.name, namespace }] : [])]);
      }
    });
  }

  it('refuses a second Cluster for a connected peer, lets it speak once the first is disabled, and closes it when an invalid kubeconfig replaces a valid one', async () => {
    const name = 'second-view';
    const { kubeconfig, clusterID } = await peer2();
    const disable = (disabled: boolean) =>
      r1.patch(CLUSTERS, undefined, 'cluster2', 'merge', { metadata: { annotations: { 'cluster-registry.k8s.cisco.com/cluster-disabled': disabled ? 'true' : null } } });
    try {
      await r1.create(SECRETS, SANDBOX_NAMESPACE, credentialsSecret(name, { kubeconfig }));
      await r1.create(CLUSTERS, undefined, peerCluster(name, { clusterID }, name));
      // The same member under two names would be read twice: the older Cluster speaks for it.
      const duplicate = await clusterWhen(r1, name, 'Failed as a duplicate', (x) => x.status?.state === 'Failed');
      assert.equal(duplicate.status?.message, `cluster ID ${clusterID} is already described by Cluster cluster2; nothing is synced through this one`);
      await warningEventFor(r1, name, /already described by Cluster cluster2/);
      assert.ok(!hasPeerInformer(await controllerMetrics(sandbox, 'cluster1'), name));
      assert.equal(readyOf(await r1.get<Cluster>(CLUSTERS, undefined, 'cluster2'))?.status, 'True');

      await disable(true);
      await clusterWhen(r1, name, 'Ready once cluster2 is disabled', (x) => readyOf(x)?.status === 'True');
      await eventually(`cluster1's controller to run informers on ${name}`, async () => hasPeerInformer(await controllerMetrics(sandbox, 'cluster1'), name));

      const secret = await r1.get<Secret>(SECRETS, SANDBOX_NAMESPACE, name);
      const insecure = kubeconfig.replace(/certificate-authority-data: \S+/, 'insecure-skip-tls-verify: true');
      assert.notEqual(insecure, kubeconfig);
      await r1.update(SECRETS, SANDBOX_NAMESPACE, { ...secret, data: credentialsSecret(name, { kubeconfig: insecure }).data });
      const refused = await clusterWhen(r1, name, 'InvalidAuthInfo', (x) => x.status?.state === 'InvalidAuthInfo');
      assert.equal(readyOf(refused)?.status, 'False');
      assert.match(refused.status?.message ?? '', /insecure-skip-tls-verify is not allowed in a peer kubeconfig/);
      await warningEventFor(r1, name, /insecure-skip-tls-verify/);
      await eventually(`cluster1's controller to stop its informers on ${name}`, async () => !hasPeerInformer(await controllerMetrics(sandbox, 'cluster1'), name));
    } finally {
      await disable(false);
      await deleteAll(r1, [{ kind: 'Cluster', name }, { kind: 'Secret', name }]);
    }
    // The genuine peer, read with the same reader credentials, comes back.
    await clusterWhen(r1, 'cluster2', 'Ready again', (x) => readyOf(x)?.status === 'True');
    await eventually("cluster1's controller to read cluster2 again", async () => hasPeerInformer(await controllerMetrics(sandbox, 'cluster1'), 'cluster2'));
  });

  it('records a new Warning Event when one failure turns into another (unreachable, then InvalidAuthInfo)', async () => {
    const name = 'turns';
    const { kubeconfig } = await peer2();
    try {
      await r1.create(SECRETS, SANDBOX_NAMESPACE, credentialsSecret(name, { kubeconfig }));
      // Our network's endpoint is a closed port.
      await r1.create(CLUSTERS, undefined, peerCluster(name, { clusterID: randomUUID(), kubernetesApiEndpoints: [{ serverAddress: '127.0.0.1:1' }] }, name));
      const unreachable = await clusterWhen(r1, name, 'Failed: unreachable', (x) => x.status?.state === 'Failed');
      assert.match(unreachable.status?.message ?? '', /^peer unreachable since .*: cannot reach the peer: ECONNREFUSED$/);
      await warningEventFor(r1, name, /unreachable/);

      const secret = await r1.get<Secret>(SECRETS, SANDBOX_NAMESPACE, name);
      await r1.update(SECRETS, SANDBOX_NAMESPACE, { ...secret, data: credentialsSecret(name, { kubeconfig: kubeconfigText({ server: 'https://127.0.0.1:1' }, { 'token-file': '/etc/hostname' }) }).data });
      const invalid = await clusterWhen(r1, name, 'InvalidAuthInfo', (x) => x.status?.state === 'InvalidAuthInfo');
      assert.equal(readyOf(invalid)?.status, 'False');
      await warningEventFor(r1, name, /token-file is not allowed/);
      // Both failures are on record, each as its own Warning.
      await warningEventFor(r1, name, /unreachable/);
    } finally {
      await deleteAll(r1, [{ kind: 'Cluster', name }, { kind: 'Secret', name }]);
    }
  });

  it('reports a Cluster without spec Failed, and keeps reconciling the others', async () => {
    // What the API lets through: the CRD requires clusterID only inside spec, and the webhook
    // refuses a Cluster without one. Only a member without the webhook (it can be turned off,
    // and upstream members may not run it) can store a Cluster without spec.
    const webhook = await webhookEnforced(r1);
    const bare = { apiVersion: CLUSTER_API_VERSION, kind: 'Cluster', metadata: { name: 'no-spec' } };
    await assert.rejects(r1.create(CLUSTERS, undefined, { ...bare, spec: {} }), (e: unknown) => e instanceof ApiError && e.code === 422 && /spec\.clusterID: Required value/.test(e.message));
    await assert.rejects(r1.create(CLUSTERS, undefined, bare), (e: unknown) => e instanceof ApiError && /denied the request: invalid Cluster: spec\.clusterID is required/.test(e.message));

    await r1.delete(WEBHOOKS, undefined, WEBHOOK_CONFIGURATION);
    try {
      // The API server stops calling the webhook once its cache has lost the configuration.
      await eventually('the API server to store a Cluster without spec', async () => {
        await r1.create(CLUSTERS, undefined, bare).catch((err: unknown) => {
          if (!isAlreadyExists(err)) throw err;
        });
        return true;
      });
      const failed = await clusterWhen(r1, 'no-spec', 'Failed', (x) => x.status?.state === 'Failed');
      assert.equal(failed.status?.message, 'spec.clusterID is missing: set it to the kube-system namespace UID of the cluster this Cluster describes');
      assert.equal(failed.status?.type, 'Peer');
      assert.equal(readyOf(failed)?.status, 'False');
      await warningEventFor(r1, 'no-spec', /spec\.clusterID is missing/);
      // The controller goes on: a new Cluster is reconciled, the local one stays Ready.
      await r1.create(CLUSTERS, undefined, peerCluster('after-no-spec', { clusterID: randomUUID() }));
      await clusterWhen(r1, 'after-no-spec', 'MissingAuthInfo', (x) => x.status?.state === 'MissingAuthInfo');
      assert.equal(readyOf(await r1.get<Cluster>(CLUSTERS, undefined, 'cluster1'))?.status, 'True');
    } finally {
      await deleteAll(r1, [{ kind: 'Cluster', name: 'no-spec' }, { kind: 'Cluster', name: 'after-no-spec' }]);
      const { metadata, ...rest } = webhook;
      await r1.create(WEBHOOKS, undefined, { ...rest, metadata: { name: metadata.name, labels: metadata.labels, annotations: metadata.annotations } });
    }
  });

  it('reports ClusterMetadataSet=False when the controller may not list Nodes, instead of stale metadata, and recovers', async () => {
    const canListNodes = async (): Promise<boolean> => {
      try {
        await asController.list(NODES, { limit: 1 });
        return true;
      } catch (err) {
        if (err instanceof ApiError && err.code === 403) return false;
        throw err;
      }
    };
    // An annotation change makes a reconcile now, rather than at the next periodic refresh.
    const touch = (value: string | null): Promise<unknown> => r1.patch(CLUSTERS, undefined, 'cluster1', 'merge', { metadata: { annotations: { 'test.cluster-registry/touched': value } } });
    const setRules = async (rules: Rule[] | undefined): Promise<void> => {
      const role = await r1.get<ClusterRole>(CLUSTER_ROLES, undefined, CONTROLLER_ROLE);
      await r1.update(CLUSTER_ROLES, undefined, { ...role, rules });
    };
    await clusterWhen(r1, 'cluster1', 'Ready', (x) => readyOf(x)?.status === 'True');
    assert.equal(await canListNodes(), true);

    const granted = (await r1.get<ClusterRole>(CLUSTER_ROLES, undefined, CONTROLLER_ROLE)).rules;
    await setRules(granted?.map((r) => ({ ...r, resources: r.resources?.filter((x) => x !== 'nodes') })));
    try {
      await eventually('the controller to be denied Nodes', async () => !(await canListNodes()));
      await touch(randomUUID());
      const failed = await clusterWhen(r1, 'cluster1', 'ClusterMetadataSet=False', (x) => conditionOf(x, 'ClusterMetadataSet')?.status === 'False');
      assert.match(conditionOf(failed, 'ClusterMetadataSet')?.message ?? '', /cannot list Nodes/);
      assert.equal(failed.status?.state, 'Failed');
      assert.equal(failed.status?.type, 'Local');
      assert.equal(readyOf(failed)?.status, 'False');
      assert.match(failed.status?.message ?? '', /^cannot read cluster metadata: cannot list Nodes/);
      // Nothing stale is left standing.
      assert.equal(failed.status?.version, undefined);
      assert.equal(failed.status?.kubeletVersions, undefined);
      await warningEventFor(r1, 'cluster1', /cannot list Nodes/);
    } finally {
      await setRules(granted);
    }
    await eventually('the controller to list Nodes again', canListNodes);
    await touch(null);
    const recovered = await clusterWhen(r1, 'cluster1', 'Ready again', (x) => readyOf(x)?.status === 'True' && conditionOf(x, 'ClusterMetadataSet')?.status === 'True');
    assert.match(recovered.status?.version ?? '', /^v1\./);
  });

  it('restores the core ClusterFeature and rules at once when they are deleted or edited', async () => {
    const RULES = { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', resource: 'resourcesyncrules' };
    const FEATURES = { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', resource: 'clusterfeatures' };
    const original = await r1.get<KubeObject & { spec: unknown }>(RULES, undefined, 'cluster-registry-core-resource-cluster-secrets-sink');
    await r1.delete(RULES, undefined, 'cluster-registry-core-resource-cluster-secrets-sink');
    await r1.patch(FEATURES, undefined, 'cluster-registry-core-resources', 'merge', { spec: { featureName: 'tampered' } });
    await eventually('the deleted core rule to be back as it was', async () => {
      const r = await r1.get<KubeObject & { spec: unknown }>(RULES, undefined, 'cluster-registry-core-resource-cluster-secrets-sink');
      return (r.metadata.uid !== original.metadata.uid && JSON.stringify(r.spec) === JSON.stringify(original.spec)) || undefined;
    });
    await eventually('the edited core feature to be restored', async () => (await r1.get<KubeObject & { spec: { featureName: string } }>(FEATURES, undefined, 'cluster-registry-core-resources')).spec.featureName === 'cluster-registry-core-resources-source' || undefined);
  });
});
