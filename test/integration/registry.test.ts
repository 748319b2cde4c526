// The cluster registry on three real clusters, each with its own controller process, joined:
// membership and status, reader-token rotation, a dying peer, a lying Cluster, the webhook, and
// logs free of secrets.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import type { Cluster } from '../../src/core/api/types.ts';
import { ApiError, ClusterConfig, RestClient, type KubeObject } from '../../src/kube/index.ts';
import { CLUSTERS, SECRETS, secretText, type Secret } from '../../src/core/api/resources.ts';
import { adminClient, SANDBOX_NAMESPACE, startGroup } from '../../src/testbed/group.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { eventually } from '../support/eventually.ts';

const ready = (c: Cluster | undefined) => c?.status?.conditions?.find((x) => x.type === 'Ready');
const tokenOfSecret = (s: Secret) => (parse(secretText(s, 'kubeconfig') ?? '') as { users: { user: { token: string } }[] }).users[0]?.user.token ?? '';

describe('cluster registry (3 clusters, joined)', () => {
  let sandbox: Sandbox;
  const rest = new Map<string, RestClient>();
  const client = (name: string): RestClient => rest.get(name) ?? assert.fail(`no client for ${name}`);
  const getCluster = (on: string, name: string) => client(on).get<Cluster>(CLUSTERS, undefined, name);
  const readerSecret = (on: string, of: string) => client(on).get<Secret>(SECRETS, SANDBOX_NAMESPACE, of);
  /** Waits for a Warning Event about Cluster `name` on cluster `on` (cluster-scoped objects' events land in default). */
  const warningEventFor = (on: string, name: string) =>
    eventually(`a Warning Event on Cluster ${name}`, async () => {
      const { items } = await client(on).list<KubeObject & { involvedObject?: { kind?: string; name?: string }; type?: string }>(
        { group: '', version: 'v1', resource: 'events' },
        { namespace: 'default' },
      );
      return items.some((e) => e.involvedObject?.kind === 'Cluster' && e.involvedObject.name === name && e.type === 'Warning');
    });
  // Every reader token ever seen, for the log check at the end.
  const seenTokens = new Set<string>();

  before(async () => {
    sandbox = await startGroup({
      clusters: 3,
      join: true,
      // cluster1 rotates its reader token every 20 s, so rotation is seen within the test.
      controllerArgs: (name) => (name === 'cluster1' ? ['--reader-token-ttl=10m', '--reader-token-refresh=20s'] : []),
    });
    for (const c of sandbox.clusters) rest.set(c.name, await adminClient(c));
  });
  after(async () => {
    for (const r of rest.values()) r.close();
    await sandbox?.stop();
  });

  it('each cluster sees itself Local and the others Peer, Ready and synced', async () => {
    for (const viewer of ['cluster1', 'cluster2', 'cluster3']) {
      await eventually(`${viewer} to see the whole group Ready and synced`, async () => {
        const { items } = await client(viewer).list<Cluster>(CLUSTERS);
        if (items.length !== 3) return false;
        return items.every((c) => {
          const local = c.metadata.name === viewer;
          const synced = c.status?.conditions?.find((x) => x.type === 'ClustersSynced')?.status;
          return c.status?.state === 'Ready' && c.status.type === (local ? 'Local' : 'Peer') && ready(c)?.status === 'True' && (local ? synced === undefined : synced === 'True');
        });
      });
    }
    const peer = await getCluster('cluster1', 'cluster2');
    assert.match(peer.status?.version ?? '', /^v1\.36\./);
    assert.deepEqual(peer.metadata.annotations?.['cluster-registry.k8s.cisco.com/resource-owner-cluster-id'], peer.spec.clusterID);
  });

  it('rotates a short-lived reader token and peers switch to it without losing the connection', async () => {
    const first = tokenOfSecret(await readerSecret('cluster1', 'cluster1'));
    seenTokens.add(first);
    let notReady: string | undefined;
    const rotated = await eventually(
      'cluster1 to rotate its reader token and both peers to hold the new one',
      async () => {
        for (const viewer of ['cluster2', 'cluster3']) {
          const c = await getCluster(viewer, 'cluster1');
          if (ready(c)?.status !== 'True') notReady ??= `${viewer} saw cluster1 ${c.status?.state ?? ''}: ${c.status?.message ?? ''}`;
        }
        const current = tokenOfSecret(await readerSecret('cluster1', 'cluster1'));
        seenTokens.add(current);
        if (current === first) return false;
        const copies = await Promise.all(['cluster2', 'cluster3'].map(async (v) => tokenOfSecret(await readerSecret(v, 'cluster1'))));
        return copies.every((t) => t === current) ? current : false;
      },
      90_000,
    );
    assert.notEqual(rotated, first);
    // The peers reconnect with the new credentials (make-before-break) one reconcile after the
    // mirrored Secret lands; Ready is sampled throughout.
    for (const viewer of ['cluster2', 'cluster3']) {
      await eventually(`${viewer} to reconnect to cluster1 with the new token`, async () => {
        const c = await getCluster(viewer, 'cluster1');
        if (ready(c)?.status !== 'True') notReady ??= `${viewer} saw cluster1 ${c.status?.state ?? ''}: ${c.status?.message ?? ''}`;
        return /"peer":"cluster1".*replaced the connection/.test(readFileSync(join(sandbox.dir, 'logs', `${viewer}-controller.log`), 'utf8'));
      }, 30_000);
    }
    assert.equal(notReady, undefined, 'a peer lost cluster1 during the rotation');
  });

  it('turns a peer whose apiserver died not-ready within 15 s with a reason, and Ready again after a restart', async (t) => {
    const c3 = sandbox.cluster('cluster3');
    await c3.apiserver.kill();
    const killedAt = Date.now();
    const seen = await eventually('cluster1 to see cluster3 not ready', async () => {
      const r = ready(await getCluster('cluster1', 'cluster3'));
      return r?.status === 'False' ? r : undefined;
    }, 30_000);
    const elapsed = Date.now() - killedAt;
    t.diagnostic(`cluster1 saw cluster3 not ready ${elapsed} ms after its apiserver was killed`);
    assert.ok(elapsed < 15_000, `took ${elapsed} ms`);
    assert.match(seen.message ?? '', /unreachable/);
    assert.equal(seen.reason, 'ClusterIsNotReady');

    await c3.apiserver.restart();
    await eventually('cluster1 to see cluster3 Ready again', async () => ready(await getCluster('cluster1', 'cluster3'))?.status === 'True', 60_000);

    // cluster3's own controller lost its lease while its apiserver was down: it must still be
    // running and lead again (a new credential-less Cluster there gets reconciled).
    assert.equal(c3.extras[0]?.process.running, true, "cluster3's controller exited");
    await client('cluster3').create(CLUSTERS, undefined, {
      apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'after-restart' },
      spec: { clusterID: randomUUID() },
    });
    await eventually("cluster3's controller to reconcile again", async () => (await getCluster('cluster3', 'after-restart')).status?.state === 'MissingAuthInfo', 60_000);
    await client('cluster3').delete(CLUSTERS, undefined, 'after-restart');
  });

  it('marks a Cluster whose clusterID does not match its credentials Failed, with an Event, and reads nothing from it', async () => {
    const r1 = client('cluster1');
    const creds = await readerSecret('cluster1', 'cluster2');
    await r1.create(SECRETS, SANDBOX_NAMESPACE, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'impostor', namespace: SANDBOX_NAMESPACE },
      type: creds.type,
      data: creds.data,
    });
    await r1.create(CLUSTERS, undefined, {
      apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'impostor' },
      spec: { clusterID: randomUUID(), authInfo: { secretRef: { name: 'impostor', namespace: SANDBOX_NAMESPACE } } },
    });
    const failed = await eventually('the impostor to be Failed', async () => {
      const c = await getCluster('cluster1', 'impostor');
      return c.status?.state === 'Failed' ? c : undefined;
    });
    assert.match(failed.status?.message ?? '', /invalid cluster ID: the credentials reach cluster [0-9a-f-]+, but spec.clusterID is/);
    await warningEventFor('cluster1', 'impostor');
    // Nothing was read from it: no informer ever ran against the impostor.
    const controller = sandbox.cluster('cluster1').extras[0];
    const metricsAddr = controller?.process.spec.args.find((a) => a.startsWith('--metrics-addr='))?.split('=')[1];
    const metrics = await (await fetch(`http://${metricsAddr ?? ''}/metrics`)).text();
    assert.match(metrics, /informer_\w+\{[^}]*cluster="cluster2"/);
    assert.doesNotMatch(metrics, /cluster="impostor"/);
    // The genuine peer with the same credentials is unaffected.
    assert.equal(ready(await getCluster('cluster1', 'cluster2'))?.status, 'True');
  });

  it('rejects a second local Cluster through the validating webhook', async () => {
    const local = await getCluster('cluster2', 'cluster2');
    await assert.rejects(
      client('cluster2').create(CLUSTERS, undefined, {
        apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
        kind: 'Cluster',
        metadata: { name: 'cluster2-again' },
        spec: { clusterID: local.spec.clusterID },
      }),
      (err: unknown) => err instanceof ApiError && /a local cluster CR with name cluster2 already exists with the same clusterID/.test(err.message),
    );
  });

  it('honours cluster-disabled: the peer is Disabled with its conditions cleared, the local cluster stays Local, and both recover', async () => {
    const r1 = client('cluster1');
    const setDisabled = async (name: string, on: boolean) => {
      const c = await getCluster('cluster1', name);
      const annotations = { ...c.metadata.annotations };
      if (on) annotations['cluster-registry.k8s.cisco.com/cluster-disabled'] = 'false';
      else delete annotations['cluster-registry.k8s.cisco.com/cluster-disabled'];
      await r1.update(CLUSTERS, undefined, { ...c, metadata: { ...c.metadata, annotations } });
    };
    await setDisabled('cluster2', true);
    await setDisabled('cluster1', true);
    const peer = await eventually('cluster2 to be Disabled', async () => {
      const c = await getCluster('cluster1', 'cluster2');
      return c.status?.state === 'Disabled' ? c : undefined;
    });
    // Presence disables, whatever the value; conditions are cleared.
    assert.equal(peer.status?.type, 'Peer');
    assert.deepEqual(peer.status?.conditions ?? [], []);
    const local = await eventually('cluster1 to be Disabled', async () => {
      const c = await getCluster('cluster1', 'cluster1');
      return c.status?.state === 'Disabled' ? c : undefined;
    });
    assert.equal(local.status?.type, 'Local');
    await setDisabled('cluster2', false);
    await setDisabled('cluster1', false);
    for (const name of ['cluster1', 'cluster2']) {
      await eventually(`${name} Ready again`, async () => (await getCluster('cluster1', name)).status?.state === 'Ready');
    }
  });

  it('persists MissingAuthInfo for a peer without a secretRef, with a Warning Event', async () => {
    const r2 = client('cluster2');
    await r2.create(CLUSTERS, undefined, {
      apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'no-credentials' },
      spec: { clusterID: randomUUID() },
    });
    const c = await eventually('MissingAuthInfo', async () => {
      const got = await getCluster('cluster2', 'no-credentials');
      return got.status?.state === 'MissingAuthInfo' ? got : undefined;
    });
    assert.match(c.status?.message ?? '', /secretRef must name the credentials Secret/);
    assert.equal(ready(c)?.status, 'False');
    await warningEventFor('cluster2', 'no-credentials');
    await r2.delete(CLUSTERS, undefined, 'no-credentials');
  });

  it('rebuilds a peer connection when its endpoint changes, and again when it changes back', async () => {
    const r1 = client('cluster1');
    const patchEndpoints = async (endpoints: unknown) => {
      const c = await getCluster('cluster1', 'cluster2');
      await r1.update(CLUSTERS, undefined, { ...c, spec: { ...c.spec, kubernetesApiEndpoints: endpoints } });
    };
    // Our network's entry points at a closed port; the generic entry would be right.
    await patchEndpoints([{ serverAddress: sandbox.cluster('cluster2').server }, { clientNetwork: 'default', serverAddress: '127.0.0.1:1' }]);
    const broken = await eventually('cluster2 unreachable through the new endpoint', async () => {
      const r = ready(await getCluster('cluster1', 'cluster2'));
      return r?.status === 'False' ? r : undefined;
    }, 30_000);
    assert.match(broken.message ?? '', /unreachable/);
    await patchEndpoints([]);
    await eventually('cluster2 Ready through the kubeconfig address again', async () => ready(await getCluster('cluster1', 'cluster2'))?.status === 'True', 30_000);
  });

  it('gives peers least privilege: Secrets only in the controller namespace, plus what aggregated reader roles add', async () => {
    const readerKubeconfig = secretText(await readerSecret('cluster1', 'cluster2'), 'kubeconfig') ?? '';
    const asReader = new RestClient(await ClusterConfig.fromString(readerKubeconfig).connection(), { maxRetries: 0 });
    try {
      const configmaps = { group: '', version: 'v1', resource: 'configmaps' };
      await asReader.list(SECRETS, { namespace: SANDBOX_NAMESPACE });
      await assert.rejects(asReader.list(SECRETS, { namespace: 'kube-system' }), (e: unknown) => e instanceof ApiError && e.code === 403);
      await assert.rejects(asReader.list(SECRETS), (e: unknown) => e instanceof ApiError && e.code === 403);
      await assert.rejects(asReader.list(configmaps, { namespace: 'default' }), (e: unknown) => e instanceof ApiError && e.code === 403);
      await client('cluster2').create({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' }, undefined, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'reader-configmaps', labels: { 'cluster-registry.k8s.cisco.com/reader-aggregated': 'true' } },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
      });
      await eventually('the aggregated role to let the reader list ConfigMaps', async () => (await asReader.list(configmaps, { namespace: 'default' })).items);
    } finally {
      asReader.close();
    }
  });

  it('writes no token, kubeconfig or key material to any log', async () => {
    for (const c of sandbox.clusters) {
      for (const s of (await client(c.name).list<Secret>(SECRETS, { namespace: SANDBOX_NAMESPACE })).items) {
        if (s.type === 'k8s.cisco.com/cluster-registry-secret') seenTokens.add(tokenOfSecret(s));
      }
      seenTokens.add(/token: (\S+)/.exec(c.kubeconfig)?.[1] ?? '');
      seenTokens.add(/token: (\S+)/.exec(readFileSync(join(sandbox.dir, c.name, `${c.name}-controller.kubeconfig`), 'utf8'))?.[1] ?? '');
    }
    seenTokens.delete('');
    assert.ok(seenTokens.size >= 9, `expected admin, controller and reader tokens, got ${seenTokens.size}`);
    const logs = readdirSync(join(sandbox.dir, 'logs')).filter((f) => f.endsWith('-controller.log'));
    assert.equal(logs.length, 3);
    for (const f of logs) {
      const text = readFileSync(join(sandbox.dir, 'logs', f), 'utf8');
      assert.ok(text.length > 0);
      for (const t of seenTokens) assert.ok(!text.includes(t), `${f} contains a token`);
      for (const marker of ['certificate-authority-data', 'BEGIN CERTIFICATE', 'PRIVATE KEY', 'kind: Config']) {
        assert.ok(!text.includes(marker), `${f} contains ${marker}`);
      }
    }
  });
});
