// The cluster registry on three real clusters, each with its own controller process, joined:
// membership and status, reader-token rotation and repair, a dying peer, a lying Cluster, the webhook, and
// logs free of secrets. Each test waits for the state it starts from and puts back what it
// changed, so any one of them can run alone or in any order.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { ANNOTATIONS, OUR_IMPLEMENTATION } from '../../src/core/api/keys.ts';
import type { Cluster } from '../../src/core/api/types.ts';
import { ApiError, ClusterConfig, isNotFound, RestClient } from '../../src/kube/index.ts';
import { CLUSTERS, SECRETS, secretText, type Secret } from '../../src/core/api/resources.ts';
import { adminClient, SANDBOX_NAMESPACE, startGroup } from '../../src/testbed/group.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { eventually } from '../support/eventually.ts';
import { stopChecked } from '../support/security-checks.ts';
import {
  controllerKubeconfigPath,
  controllerLog,
  controllerLogs,
  controllerMetrics,
  credentialsSecret,
  deleteAll,
  hasPeerInformer,
  peerCluster,
  readyOf as ready,
  warningEventFor,
  webhookEnforced,
} from '../support/registry.ts';

const tokenOfSecret = (s: Secret) => (parse(secretText(s, 'kubeconfig') ?? '') as { users: { user: { token: string } }[] }).users[0]?.user.token ?? '';

describe('cluster registry (3 clusters, joined)', () => {
  let sandbox: Sandbox;
  const rest = new Map<string, RestClient>();
  const client = (name: string): RestClient => rest.get(name) ?? assert.fail(`no client for ${name}`);
  const getCluster = (on: string, name: string) => client(on).get<Cluster>(CLUSTERS, undefined, name);
  const readerSecret = (on: string, of: string) => client(on).get<Secret>(SECRETS, SANDBOX_NAMESPACE, of);
  // Every reader token seen, for the log check: the rotation test adds the tokens it rotated away.
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
    // With the checks every group gets: what the controllers sent and logged, what the readers may do.
    if (sandbox) await stopChecked(sandbox);
  });

  /**
   * Every cluster sees itself Local and the others Peer, Ready and synced. Changes to a Cluster
   * travel to the peers' copies, so a test that made one waits for this before it ends.
   */
  async function groupSettled(): Promise<void> {
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
  }

  it('each cluster sees itself Local and the others Peer, Ready and synced', async () => {
    await groupSettled();
    const peer = await getCluster('cluster1', 'cluster2');
    assert.match(peer.status?.version ?? '', /^v1\.36\./);
    assert.deepEqual(peer.metadata.annotations?.['cluster-registry.k8s.cisco.com/resource-owner-cluster-id'], peer.spec.clusterID);
  });

  it('marks its local Cluster as ours, puts the mark back when it is removed, and the peers see it', async () => {
    await groupSettled();
    const marked = (c: Cluster) => c.metadata.annotations?.[ANNOTATIONS.implementation] === OUR_IMPLEMENTATION;
    assert.ok(marked(await getCluster('cluster2', 'cluster2')), 'provisioned with the mark');
    await client('cluster2').patch(CLUSTERS, undefined, 'cluster2', 'json', [{ op: 'remove', path: `/metadata/annotations/${ANNOTATIONS.implementation.replace('/', '~1')}` }]);
    for (const viewer of ['cluster2', 'cluster1', 'cluster3']) {
      await eventually(`${viewer}'s cluster2 to carry the mark again`, async () => marked(await getCluster(viewer, 'cluster2')) || undefined);
    }
    await groupSettled();
  });

  it('rotates a short-lived reader token and peers switch to it without losing the connection', async () => {
    await groupSettled();
    const first = tokenOfSecret(await readerSecret('cluster1', 'cluster1'));
    seenTokens.add(first);
    // Only what the viewers log from now on counts as their reaction to this rotation.
    const logFrom = new Map(['cluster2', 'cluster3'].map((v) => [v, controllerLog(sandbox, v).length]));
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
        return /"peer":"cluster1".*replaced the connection/.test(controllerLog(sandbox, viewer).slice(logFrom.get(viewer)));
      }, 30_000);
    }
    assert.equal(notReady, undefined, 'a peer lost cluster1 during the rotation');
  });

  it('puts its own reader token back when its reader Secret holds one of another identity or a longer life, and drops the marks of a copy', async () => {
    await groupSettled();
    const subject = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: string }).sub;
    const original = await readerSecret('cluster2', 'cluster2');
    const readerSubject = subject(tokenOfSecret(original));
    assert.match(readerSubject ?? '', /^system:serviceaccount:/);
    // A genuine token, of an identity that is not the reader's.
    const request = await client('cluster2').json<{ status: { token: string } }>({
      method: 'POST',
      path: `/api/v1/namespaces/${SANDBOX_NAMESPACE}/serviceaccounts/default/token`,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    });
    const foreign = request.status.token;
    assert.notEqual(subject(foreign), readerSubject);
    seenTokens.add(foreign);
    const kubeconfig = (secretText(original, 'kubeconfig') ?? '').replace(tokenOfSecret(original), foreign);
    const c3 = (await getCluster('cluster2', 'cluster3')).spec.clusterID;
    const owner = 'cluster-registry.k8s.cisco.com/resource-owner-cluster-id';
    await client('cluster2').update(SECRETS, SANDBOX_NAMESPACE, {
      ...original,
      metadata: { ...original.metadata, annotations: { ...original.metadata.annotations, [owner]: c3, keep: 'me' }, labels: { ...original.metadata.labels, [owner]: c3 } },
      data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
    });
    const repaired = await eventually("cluster2's controller to put a reader token back", async () => {
      const s = await readerSecret('cluster2', 'cluster2');
      const token = tokenOfSecret(s);
      seenTokens.add(token);
      return subject(token) === readerSubject && s.metadata.annotations?.[owner] === undefined ? s : undefined;
    });
    assert.equal(repaired.metadata.labels?.[owner], undefined);
    assert.equal(repaired.metadata.annotations?.['keep'], 'me');

    // A genuine reader token, but one that outlives the tokens the controller issues (a day here).
    const [, , readerNamespace, readerAccount] = (readerSubject ?? '').split(':');
    const longLived = (
      await client('cluster2').json<{ status: { token: string } }>({
        method: 'POST',
        path: `/api/v1/namespaces/${readerNamespace ?? ''}/serviceaccounts/${readerAccount ?? ''}/token`,
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3 * 86_400 } },
      })
    ).status.token;
    seenTokens.add(longLived);
    const lifetime = (token: string): number => {
      const c = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { iat: number; exp: number };
      return c.exp - c.iat;
    };
    assert.equal(lifetime(longLived), 3 * 86_400);
    const held = await readerSecret('cluster2', 'cluster2');
    await client('cluster2').update(SECRETS, SANDBOX_NAMESPACE, { ...held, data: { kubeconfig: Buffer.from((secretText(held, 'kubeconfig') ?? '').replace(tokenOfSecret(held), longLived)).toString('base64') } });
    await eventually("cluster2's controller to replace a token that outlives its own", async () => {
      const token = tokenOfSecret(await readerSecret('cluster2', 'cluster2'));
      seenTokens.add(token);
      return (token !== longLived && lifetime(token) <= 86_400) || undefined;
    });
    await client('cluster2').patch(SECRETS, SANDBOX_NAMESPACE, 'cluster2', 'merge', { metadata: { annotations: { keep: null } } });
    await groupSettled();
  });

  it("turns a peer whose apiserver died not-ready on its health probe, with a reason, and Ready again after a restart", async (t) => {
    const c3 = sandbox.cluster('cluster3');
    await eventually('cluster1 to see cluster3 Ready', async () => ready(await getCluster('cluster1', 'cluster3'))?.status === 'True');
    const logFrom = controllerLog(sandbox, 'cluster1').length;
    await c3.apiserver.kill();
    try {
      const killedAt = Date.now();
      const seen = await eventually('cluster1 to see cluster3 not ready', async () => {
        const r = ready(await getCluster('cluster1', 'cluster3'));
        return r?.status === 'False' ? r : undefined;
      }, 30_000);
      t.diagnostic(`cluster1 saw cluster3 not ready ${Date.now() - killedAt} ms after its apiserver was killed`);
      assert.match(seen.message ?? '', /unreachable/);
      assert.equal(seen.reason, 'ClusterIsNotReady');
      // A probe found it (probes run every 5 s), not a periodic refresh: the health change is logged.
      assert.match(controllerLog(sandbox, 'cluster1').slice(logFrom), /"peer":"cluster3","state":"unreachable".*"msg":"peer health changed"/);
    } finally {
      await c3.apiserver.restart();
    }
    await eventually('cluster1 to see cluster3 Ready again', async () => ready(await getCluster('cluster1', 'cluster3'))?.status === 'True', 60_000);

    // cluster3's own controller lost its lease while its apiserver was down: it must still be
    // running and lead again (a new credential-less Cluster there gets reconciled).
    assert.equal(c3.extras[0]?.process.running, true, "cluster3's controller exited");
    try {
      await client('cluster3').create(CLUSTERS, undefined, peerCluster('after-restart', { clusterID: randomUUID() }));
      await eventually("cluster3's controller to reconcile again", async () => (await getCluster('cluster3', 'after-restart')).status?.state === 'MissingAuthInfo', 60_000);
    } finally {
      await deleteAll(client('cluster3'), [{ kind: 'Cluster', name: 'after-restart' }]);
    }
  });

  it('marks a Cluster whose clusterID does not match its credentials Failed, with an Event, and reads nothing from it', async () => {
    const r1 = client('cluster1');
    const creds = await readerSecret('cluster1', 'cluster2');
    try {
      await r1.create(SECRETS, SANDBOX_NAMESPACE, { ...credentialsSecret('impostor', {}), data: creds.data });
      await r1.create(CLUSTERS, undefined, peerCluster('impostor', { clusterID: randomUUID() }, 'impostor'));
      const failed = await eventually('the impostor to be Failed', async () => {
        const c = await getCluster('cluster1', 'impostor');
        return c.status?.state === 'Failed' ? c : undefined;
      });
      assert.match(failed.status?.message ?? '', /invalid cluster ID: the credentials reach cluster [0-9a-f-]+, but spec.clusterID is/);
      await warningEventFor(r1, 'impostor', /invalid cluster ID/);
      // Nothing was read from it: no informer ever ran against the impostor.
      const metrics = await eventually("cluster1's controller to run informers on cluster2", async () => {
        const m = await controllerMetrics(sandbox, 'cluster1');
        return hasPeerInformer(m, 'cluster2') ? m : undefined;
      });
      assert.doesNotMatch(metrics, /cluster="impostor"/);
      // The genuine peer with the same credentials is unaffected.
      assert.equal(ready(await getCluster('cluster1', 'cluster2'))?.status, 'True');
    } finally {
      await deleteAll(r1, [{ kind: 'Cluster', name: 'impostor' }, { kind: 'Secret', name: 'impostor' }]);
    }
  });

  it('rejects a second local Cluster through the validating webhook', async () => {
    const local = await getCluster('cluster2', 'cluster2');
    await webhookEnforced(client('cluster2'));
    await assert.rejects(
      client('cluster2').create(CLUSTERS, undefined, peerCluster('cluster2-again', { clusterID: local.spec.clusterID })),
      (err: unknown) => err instanceof ApiError && /a local cluster CR with name cluster2 already exists with the same clusterID/.test(err.message),
    );
  });

  it('honours cluster-disabled: the peer is Disabled with its conditions cleared, the local cluster stays Local, and both recover', async () => {
    // A merge patch: the controllers write these Clusters too, so a read-modify-write could conflict.
    const setDisabled = (name: string, disabled: boolean) =>
      client('cluster1').patch(CLUSTERS, undefined, name, 'merge', { metadata: { annotations: { 'cluster-registry.k8s.cisco.com/cluster-disabled': disabled ? 'false' : null } } });
    try {
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
      // It is this cluster's decision only: the annotation does not travel to the peers' copies
      // (upstream copied it, and a peer that then stopped reading cluster1 could not see it lifted).
      // A label set after it does travel: once a peer's copy has it, the copy reflects the annotated source.
      await client('cluster1').patch(CLUSTERS, undefined, 'cluster1', 'merge', { metadata: { labels: { 'disabled-probe': 'yes' } } });
      for (const peer of ['cluster2', 'cluster3']) {
        await eventually(`${peer}'s copy of cluster1 to carry the later label`, async () => (await getCluster(peer, 'cluster1')).metadata.labels?.['disabled-probe'] === 'yes');
        const copy = await getCluster(peer, 'cluster1');
        assert.equal(copy.metadata.annotations?.['cluster-registry.k8s.cisco.com/cluster-disabled'], undefined);
        assert.equal(copy.status?.state, 'Ready');
      }
    } finally {
      await setDisabled('cluster2', false);
      await setDisabled('cluster1', false);
      await client('cluster1').patch(CLUSTERS, undefined, 'cluster1', 'merge', { metadata: { labels: { 'disabled-probe': null } } });
    }
    for (const name of ['cluster1', 'cluster2']) {
      await eventually(`${name} Ready again`, async () => (await getCluster('cluster1', name)).status?.state === 'Ready');
    }
    await groupSettled();
  });

  it('persists MissingAuthInfo for a peer without a secretRef, with a Warning Event', async () => {
    const r2 = client('cluster2');
    try {
      await r2.create(CLUSTERS, undefined, peerCluster('no-credentials', { clusterID: randomUUID() }));
      const c = await eventually('MissingAuthInfo', async () => {
        const got = await getCluster('cluster2', 'no-credentials');
        return got.status?.state === 'MissingAuthInfo' ? got : undefined;
      });
      assert.match(c.status?.message ?? '', /secretRef must name the credentials Secret/);
      assert.equal(ready(c)?.status, 'False');
      await warningEventFor(r2, 'no-credentials', /secretRef must name the credentials Secret/);
    } finally {
      await deleteAll(r2, [{ kind: 'Cluster', name: 'no-credentials' }]);
    }
  });

  it('rebuilds a peer connection when its endpoint changes, and again when it changes back', async () => {
    const r1 = client('cluster1');
    // A merge patch (arrays are replaced whole): no read-modify-write to conflict with the controllers' writes.
    const patchEndpoints = (endpoints: unknown) => r1.patch(CLUSTERS, undefined, 'cluster2', 'merge', { spec: { kubernetesApiEndpoints: endpoints } });
    await eventually('cluster2 Ready', async () => ready(await getCluster('cluster1', 'cluster2'))?.status === 'True');
    const original = (await getCluster('cluster1', 'cluster2')).spec.kubernetesApiEndpoints ?? null;
    try {
      // Our network's entry points at a closed port; the generic entry would be right.
      await patchEndpoints([{ serverAddress: sandbox.cluster('cluster2').server }, { clientNetwork: 'default', serverAddress: '127.0.0.1:1' }]);
      const broken = await eventually('cluster2 unreachable through the new endpoint', async () => {
        const r = ready(await getCluster('cluster1', 'cluster2'));
        return r?.status === 'False' ? r : undefined;
      }, 30_000);
      assert.match(broken.message ?? '', /unreachable/);
    } finally {
      await patchEndpoints(original);
    }
    await eventually('cluster2 Ready through the kubeconfig address again', async () => ready(await getCluster('cluster1', 'cluster2'))?.status === 'True', 30_000);
  });

  it('gives peers least privilege: Secrets only in the controller namespace, plus what aggregated reader roles add', async () => {
    const readerKubeconfig = secretText(await readerSecret('cluster1', 'cluster2'), 'kubeconfig') ?? '';
    const asReader = new RestClient(await ClusterConfig.fromString(readerKubeconfig).connection(), { maxRetries: 0 });
    const clusterRoles = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' };
    try {
      const configmaps = { group: '', version: 'v1', resource: 'configmaps' };
      await asReader.list(SECRETS, { namespace: SANDBOX_NAMESPACE });
      await assert.rejects(asReader.list(SECRETS, { namespace: 'kube-system' }), (e: unknown) => e instanceof ApiError && e.code === 403);
      await assert.rejects(asReader.list(SECRETS), (e: unknown) => e instanceof ApiError && e.code === 403);
      await assert.rejects(asReader.list(configmaps, { namespace: 'default' }), (e: unknown) => e instanceof ApiError && e.code === 403);
      await client('cluster2').create(clusterRoles, undefined, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'reader-configmaps', labels: { 'cluster-registry.k8s.cisco.com/reader-aggregated': 'true' } },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
      });
      await eventually('the aggregated role to let the reader list ConfigMaps', async () => (await asReader.list(configmaps, { namespace: 'default' })).items);
    } finally {
      asReader.close();
      await client('cluster2').delete(clusterRoles, undefined, 'reader-configmaps').catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
  });

  it('writes no token, kubeconfig or key material to any log', async () => {
    for (const c of sandbox.clusters) {
      for (const s of (await client(c.name).list<Secret>(SECRETS, { namespace: SANDBOX_NAMESPACE })).items) {
        if (s.type === 'k8s.cisco.com/cluster-registry-secret') seenTokens.add(tokenOfSecret(s));
      }
      seenTokens.add(/token: (\S+)/.exec(c.kubeconfig)?.[1] ?? '');
      seenTokens.add(/token: (\S+)/.exec(readFileSync(controllerKubeconfigPath(sandbox, c.name), 'utf8'))?.[1] ?? '');
    }
    seenTokens.delete('');
    assert.ok(seenTokens.size >= 9, `expected admin, controller and reader tokens, got ${seenTokens.size}`);
    const logs = controllerLogs(sandbox);
    assert.equal(logs.size, 3);
    for (const [f, text] of logs) {
      assert.ok(text.length > 0);
      for (const t of seenTokens) assert.ok(!text.includes(t), `${f} contains a token`);
      for (const marker of ['certificate-authority-data', 'BEGIN CERTIFICATE', 'PRIVATE KEY', 'kind: Config']) {
        assert.ok(!text.includes(marker), `${f} contains ${marker}`);
      }
    }
  });
});
