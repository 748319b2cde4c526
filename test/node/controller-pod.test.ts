// The controller as users run it: our image, built from the Dockerfile as it is, installed with
// our chart onto a cluster with a real node (kubelet, containerd, kube-proxy), joined to two
// sandbox clusters, and run there through what a Pod lives through: a token the kubelet rotates,
// restarts, upgrades and a leader's Pod deleted. The real node changes the host; after it stops,
// the test checks that nothing it changed is left.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLUSTERS, NODES, RESOURCE_SYNC_RULES as RULES, SECRETS, secretText, type Secret } from '../../src/core/api/resources.ts';
import type { Cluster, KubeObject } from '../../src/core/api/types.ts';
import { LEASES, type Lease } from '../../src/kube/leader-election.ts';
import type { RestClient } from '../../src/kube/rest.ts';
import { installRegistry } from '../../src/registry/install.ts';
import { PACKAGE_ROOT, startSandbox, TOOLS_BIN_DIR, type Sandbox } from '../../src/sandbox/index.ts';
import { probe } from '../../src/sandbox/net.ts';
import { adminClient, startGroup } from '../../src/testbed/group.ts';
import { eventually } from '../support/eventually.ts';
import { cli } from '../support/process.ts';
import { RealNodeCluster } from '../support/real-node/cluster.ts';
import { freshLogDir, getOrUndefined, kubectlSwap, rule, secret } from '../support/sync-helpers.ts';
import { startUpstreamController, upstreamManifestsDir } from '../support/upstream.ts';
import { imageConfig, imagePaths } from './image.ts';

const NS = 'cluster-registry';
const RELEASE = 'cluster-registry';
const CHART = join(PACKAGE_ROOT, 'deploy', 'charts', 'cluster-registry');
const SELECTOR = 'app.kubernetes.io/name=cluster-registry-controller';
const PODS = { group: '', version: 'v1', resource: 'pods' };
const WEBHOOKS = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' };
const PEERS = ['peer1', 'peer2'] as const;

interface Pod extends KubeObject {
  spec: { nodeName?: string; containers: { name: string; image: string; securityContext?: { readOnlyRootFilesystem?: boolean } }[]; securityContext?: { runAsNonRoot?: boolean; seccompProfile?: { type?: string } } };
  status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[]; containerStatuses?: { name: string; ready: boolean; restartCount: number }[] };
}

/** A Secret synced by the test rule: its value on a member, once it is `value`. */
function holds(on: RestClient, name: string, value: string, label: string): Promise<Secret> {
  return eventually(`${label} to hold ${name}=${value}`, async () => {
    const s = await getOrUndefined<Secret>(on, SECRETS, NS, name);
    return s && secretText(s, 'value') === value ? s : undefined;
  }, 120_000);
}

function gone(on: RestClient, name: string, label: string): Promise<true> {
  return eventually(`${name} to be gone from ${label}`, async () => (await getOrUndefined(on, SECRETS, NS, name)) === undefined || undefined, 120_000);
}

const ready = (p: Pod): boolean => !p.metadata.deletionTimestamp && (p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);

describe('the controller as a Pod on a real node', { timeout: 900_000 }, () => {
  const logs = freshLogDir('real-node');
  let node: RealNodeCluster | undefined;
  let peers: Sandbox | undefined;
  let rest: RestClient;
  const peer: Record<string, RestClient> = {};

  const n = (): RealNodeCluster => node ?? assert.fail('no node');
  const imageValues = (): string[] => ['--set', `image.repository=${n().images.controller.repository}`, '--set', `image.tag=${n().images.controller.tag}`, '--set', 'image.pullPolicy=Never'];

  async function controllerPods(): Promise<Pod[]> {
    return (await rest.list<Pod>(PODS, { namespace: NS, labelSelector: SELECTOR })).items;
  }

  async function readyPods(count: number): Promise<Pod[]> {
    return eventually(`${count} Ready controller Pod(s)`, async () => {
      const pods = await controllerPods();
      const live = pods.filter((p) => !p.metadata.deletionTimestamp);
      if (live.length !== count || !live.every(ready)) throw new Error(pods.map((p) => `${p.metadata.name ?? ''}: ${p.status?.phase ?? ''} ${JSON.stringify(p.status?.containerStatuses ?? [])}`).join('; ') || 'no Pods');
      return live;
    }, 180_000);
  }

  before(async () => {
    const log = (m: string): void => console.log(`# ${m}`);
    const started = Date.now();
    node = await RealNodeCluster.start({ name: 'node-cluster', logDir: join(logs, 'node'), log });
    log(`real node ready in ${Math.round((Date.now() - started) / 1000)} s`);
    rest = await n().admin();
    peers = await startGroup({ names: [...PEERS], address: n().address, dir: join(logs, 'peers'), join: true });
    for (const p of PEERS) peer[p] = await adminClient(peers.cluster(p));
    await n().helm(['install', RELEASE, CHART, '--namespace', NS, '--create-namespace', '--set', 'localCluster.name=node-cluster', ...imageValues(), '--wait', '--timeout', '3m']);
  });

  after(async () => {
    for (const c of Object.values(peer)) c.close();
    rest?.close();
    await peers?.stop();
    if (!node) return;
    const stopped = Date.now();
    await node.stop();
    console.log(`# real node stopped in ${Math.round((Date.now() - stopped) / 1000)} s`);
    assert.deepEqual(await node.leftovers(), [], 'the host is as it was before the node started');
  });

  it('ships an image built from the Dockerfile as it is: numeric non-root user, the entry point, production dependencies only, within its size', async () => {
    const { controller, base } = n().images;
    const config = await imageConfig(controller.archive);
    assert.equal(config.User, '1000:1000');
    assert.deepEqual(config.Entrypoint, ['node', '/app/bin/cluster-registry.js']);
    assert.deepEqual(config.Cmd, ['controller']);
    assert.ok(config.Env?.includes('NODE_ENV=production'));
    const paths = await imagePaths(controller.archive);
    // Every package the lock file installs for production only is there; none installed for development only.
    const lock = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; optional?: boolean }> };
    const installed = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/') && !path.slice(13).includes('node_modules/'));
    const dev = installed.filter(([, p]) => p.dev).map(([path]) => path);
    const production = installed.filter(([, p]) => !p.dev && !p.optional).map(([path]) => path);
    assert.ok(dev.length > 0 && production.length > 0);
    for (const path of production) assert.ok(paths.has(`app/${path}/package.json`), `production package ${path} is in the image`);
    for (const path of dev) assert.ok(!paths.has(`app/${path}/package.json`), `development package ${path} is not in the image`);
    assert.ok(paths.has('app/dist/cli/main.js'), 'the compiled CLI');
    assert.ok(![...paths].some((p) => p.startsWith('app/src/') || (p.startsWith('app/dist/') && p.endsWith('.test.js'))), 'no sources or tests of ours');
    const added = statSync(controller.archive).size - statSync(base.archive).size;
    console.log(`# image: ${(statSync(controller.archive).size / 2 ** 20).toFixed(0)} MiB, ${(added / 2 ** 20).toFixed(0)} MiB over its base`);
    assert.ok(added < 128 * 2 ** 20, `our layers add ${added} bytes to the base`);
  });

  it('installs with helm: the Pod is Ready under the chart\'s restrictions, serves its probes, its webhook answers through the Service, and the local Cluster and reader Secret are made', async () => {
    const [pod] = await readyPods(1);
    assert.ok(pod);
    assert.equal(pod.spec.nodeName, 'node-cluster');
    assert.equal(pod.spec.containers[0]?.image, n().images.controller.ref);
    // What containerd runs is what the chart asks for.
    const spec = (await n().containerSpec('manager', pod.metadata.name ?? '')) as { root?: { readonly?: boolean }; process?: { user?: { uid?: number }; capabilities?: { bounding?: string[] } }; linux?: { seccomp?: unknown } };
    assert.equal(spec.root?.readonly, true, 'read-only root filesystem');
    assert.equal(spec.process?.user?.uid, 1000, 'runs as the image user');
    assert.deepEqual(spec.process?.capabilities?.bounding ?? [], [], 'no capabilities');
    assert.ok(spec.linux?.seccomp, 'a seccomp profile');
    // The probes the kubelet asks, asked directly too.
    for (const path of ['/healthz', '/readyz']) assert.equal((await probe(`http://${pod.status?.podIP ?? ''}:8090${path}`))?.status, 200, path);
    // The webhook is reached through its Service only, and refuses a second local Cluster.
    const [hook] = (await rest.list<KubeObject & { webhooks: { clientConfig: { service?: unknown; url?: string } }[] }>(WEBHOOKS)).items.filter((w) => w.metadata.name?.startsWith('cluster-registry'));
    assert.ok(hook?.webhooks[0]?.clientConfig.service && !hook.webhooks[0].clientConfig.url, 'registered by Service');
    const local = await eventually('the local Cluster', () => getOrUndefined<Cluster>(rest, CLUSTERS, undefined, 'node-cluster'));
    await assert.rejects(
      rest.create(CLUSTERS, undefined, { apiVersion: local.apiVersion, kind: 'Cluster', metadata: { name: 'second-local' }, spec: { clusterID: local.spec.clusterID } }),
      /already exists with the same clusterID/,
    );
    const reader = await eventually('the reader Secret', () => getOrUndefined<Secret>(rest, SECRETS, NS, 'node-cluster'));
    assert.equal(reader.type, 'k8s.cisco.com/cluster-registry-secret');
    assert.match(secretText(reader, 'kubeconfig') ?? '', new RegExp(`server: https://${n().address.replace(/\./g, '\\.')}:\\d+`));
  });

  it('joins two sandbox clusters with `join`, then a rule syncs into its cluster and out of it, and a change and a deletion follow', async () => {
    for (const p of PEERS) {
      const r = await cli(['join', '--kubeconfig', n().kubeconfigPath, '--peer-kubeconfig', peers?.cluster(p).kubeconfigPath ?? '', '--namespace', NS]);
      assert.equal(r.code, 0, r.stderr);
    }
    await rest.create(RULES, undefined, rule('pod-test-secrets', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: { 'pod-test': 'yes' } }] }] }] }));
    const labels = { 'pod-test': 'yes' };
    // Into the node's cluster from a peer, and out of it to both peers.
    await peer['peer1']?.create(SECRETS, NS, secret(NS, 'from-peer1', { value: 'one' }, { labels }));
    await rest.create(SECRETS, NS, secret(NS, 'from-node', { value: 'one' }, { labels }));
    await holds(rest, 'from-peer1', 'one', 'the node cluster');
    for (const p of PEERS) await holds(peer[p] as RestClient, 'from-node', 'one', p);
    // A change follows each way.
    await peer['peer1']?.patch(SECRETS, NS, 'from-peer1', 'merge', { stringData: { value: 'two' } });
    await rest.patch(SECRETS, NS, 'from-node', 'merge', { stringData: { value: 'two' } });
    await holds(rest, 'from-peer1', 'two', 'the node cluster');
    for (const p of PEERS) await holds(peer[p] as RestClient, 'from-node', 'two', p);
    // And a deletion.
    await peer['peer1']?.delete(SECRETS, NS, 'from-peer1');
    await gone(rest, 'from-peer1', 'the node cluster');
    await rest.delete(SECRETS, NS, 'from-node');
    for (const p of PEERS) await gone(peer[p] as RestClient, 'from-node', p);
  });

  it('keeps working when the kubelet rotates its ServiceAccount token: its requests carry the new token', async () => {
    const [pod] = await readyPods(1);
    const uid = pod?.metadata.uid ?? assert.fail('no pod');
    const jti = (token: string): string => (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { jti: string }).jti;
    const before = jti(n().podToken(uid));
    // A kubelet that starts again has no token cached: it asks for a new one and writes it into
    // the Pod's projected volume, as it does when the old one nears its expiry.
    await n().component('kubelet').restart();
    const rotated = await eventually('the kubelet to write a new token', () => {
      const now = jti(n().podToken(uid));
      return now !== before ? now : undefined;
    }, 120_000);
    const user = `system:serviceaccount:${NS}:cluster-registry-controller`;
    const credential = (e: { user?: { extra?: Record<string, string[]> } }): string | undefined => e.user?.extra?.['authentication.kubernetes.io/credential-id']?.[0];
    assert.ok(n().auditEvents(user).some((e) => credential(e) === `JTI=${before}`), 'the audit log names the token the controller used before');
    await eventually('the controller to send the rotated token', () => n().auditEvents(user).some((e) => credential(e) === `JTI=${rotated}`), 120_000);
    // And it still does its work with it.
    await peer['peer2']?.create(SECRETS, NS, secret(NS, 'after-rotation', { value: 'x' }, { labels: { 'pod-test': 'yes' } }));
    await holds(rest, 'after-rotation', 'x', 'the node cluster');
    const failures = n().auditEvents(user).filter((e) => credential(e) === `JTI=${rotated}` && (e.responseStatus?.code ?? 200) === 401);
    assert.deepEqual(failures, [], 'no request with the new token was refused');
    await peer['peer2']?.delete(SECRETS, NS, 'after-rotation');
    await gone(rest, 'after-rotation', 'the node cluster');
  });

  it('loses nothing and rewrites no copy across a Pod restart and a helm upgrade', async () => {
    const labels = { 'pod-test': 'yes' };
    await peer['peer1']?.create(SECRETS, NS, secret(NS, 'kept', { value: 'v1' }, { labels }));
    await rest.create(SECRETS, NS, secret(NS, 'kept-out', { value: 'v1' }, { labels }));
    const copy = await holds(rest, 'kept', 'v1', 'the node cluster');
    const copiesOut = await Promise.all(PEERS.map((p) => holds(peer[p] as RestClient, 'kept-out', 'v1', p)));
    const snapshot = (s: Secret): string => `${s.metadata.uid ?? ''}@${s.metadata.resourceVersion ?? ''}`;

    const [first] = await readyPods(1);
    await rest.delete(PODS, NS, first?.metadata.name ?? '');
    const [second] = await eventually('a new Pod', async () => {
      const pods = (await readyPods(1)).filter((p) => p.metadata.uid !== first?.metadata.uid);
      return pods.length === 1 ? pods : undefined;
    }, 180_000);
    assert.ok(second);
    await n().helm(['upgrade', RELEASE, CHART, '--namespace', NS, '--reuse-values', '--set', 'controller.log.verbosity=1', '--wait', '--timeout', '3m']);
    const [third] = await readyPods(1);
    assert.notEqual(third?.metadata.uid, second.metadata.uid, 'the upgrade rolled the Pod');

    // Work done meanwhile arrives; what was there was not written again.
    await peer['peer1']?.patch(SECRETS, NS, 'kept', 'merge', { stringData: { value: 'v2' } });
    await holds(rest, 'kept', 'v2', 'the node cluster');
    assert.equal((await rest.get<Secret>(SECRETS, NS, 'kept')).metadata.uid, copy.metadata.uid, 'the copy was updated in place');
    for (const [i, p] of PEERS.entries()) assert.equal(snapshot(await peer[p]?.get<Secret>(SECRETS, NS, 'kept-out') as Secret), snapshot(copiesOut[i] as Secret), `${p}'s copy untouched`);
    assert.equal((await rest.get<Cluster>(CLUSTERS, undefined, 'node-cluster')).spec.clusterID, (await peer['peer1']?.get<Cluster>(CLUSTERS, undefined, 'node-cluster'))?.spec.clusterID, 'the same identity');
    await peer['peer1']?.delete(SECRETS, NS, 'kept');
    await rest.delete(SECRETS, NS, 'kept-out');
    await gone(rest, 'kept', 'the node cluster');
  });

  it('with two replicas, the other Pod leads within the lease when the leader\'s Pod is deleted, and the two never lead at once', async () => {
    await n().helm(['upgrade', RELEASE, CHART, '--namespace', NS, '--reuse-values', '--set', 'replicas=2', '--wait', '--timeout', '3m']);
    const pods = await readyPods(2);
    const lease = await eventually('a leader', async () => {
      const l = await getOrUndefined<Lease>(rest, LEASES, NS, 'cluster-registry-leader-election');
      return l?.spec?.holderIdentity ? l : undefined;
    });
    const leader = pods.find((p) => lease.spec?.holderIdentity?.startsWith(p.metadata.name ?? '-'));
    const standby = pods.find((p) => p !== leader);
    assert.ok(leader && standby, `the holder ${lease.spec?.holderIdentity ?? ''} is one of the Pods`);
    // Every holder the Lease names from here on, in order.
    const holders: string[] = [lease.spec?.holderIdentity ?? ''];
    const watch = await rest.watch<Lease>(LEASES, { namespace: NS, resourceVersion: lease.metadata.resourceVersion ?? '', fieldSelector: 'metadata.name=cluster-registry-leader-election' });
    const watching = (async () => {
      for await (const ev of watch) {
        const h = ev.object.spec?.holderIdentity ?? '';
        if (h !== holders.at(-1)) holders.push(h);
      }
    })();
    // The node is cordoned first, as for a drain, so that the Pod replacing the leader waits and
    // only the standby can take over.
    await rest.patch(NODES, undefined, 'node-cluster', 'merge', { spec: { unschedulable: true } });
    const deleted = Date.now();
    let took: number;
    try {
      await rest.delete(PODS, NS, leader.metadata.name ?? '');
      await eventually('the standby to lead', () => {
        if (holders.at(-1)?.startsWith(standby.metadata.name ?? '-')) return true;
        throw new Error(`holders so far: ${holders.join(' -> ')}; standby ${standby.metadata.name ?? ''}`);
      }, 60_000);
      took = Date.now() - deleted;
    } finally {
      watch.close();
      await watching.catch(() => undefined);
      await rest.patch(NODES, undefined, 'node-cluster', 'merge', { spec: { unschedulable: false } });
    }
    assert.ok(took <= 15_000, `took over in ${took} ms, within the 15 s lease`);
    assert.deepEqual(holders.filter((h) => h !== ''), [lease.spec?.holderIdentity, holders.at(-1)], 'the lease went from the leader to the standby once, through no one else');
    // The group stays in sync under the new leader.
    await peer['peer1']?.create(SECRETS, NS, secret(NS, 'after-failover', { value: 'x' }, { labels: { 'pod-test': 'yes' } }));
    await holds(rest, 'after-failover', 'x', 'the node cluster');
    await peer['peer1']?.delete(SECRETS, NS, 'after-failover');
    await n().helm(['upgrade', RELEASE, CHART, '--namespace', NS, '--reuse-values', '--set', 'replicas=1', '--wait', '--timeout', '3m']);
  });
});

/** The ```sh blocks of a section of docs/migration.md (and of "Before you start", which sets the names), as one script. */
function migrationScript(section: string): string {
  const doc = readFileSync(join(PACKAGE_ROOT, 'docs', 'migration.md'), 'utf8');
  const blocks = (title: string): string[] => {
    const start = doc.indexOf(`\n## ${title}\n`);
    assert.ok(start >= 0, `docs/migration.md has a section "${title}"`);
    const end = doc.indexOf('\n## ', start + 1);
    const text = doc.slice(start, end < 0 ? undefined : end);
    return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => (m[1] ?? '').replace(/^ {2}/gm, ''));
  };
  const commands = blocks(section);
  assert.ok(commands.length > 0, `"${section}" has commands`);
  return ['set -euo pipefail', ...blocks('Before you start'), ...commands].join('\n');
}

describe("the Go controller's release upgraded to ours in place, and back, as docs/migration.md says", { timeout: 900_000 }, () => {
  const logs = freshLogDir('real-node-migration');
  let node: RealNodeCluster | undefined;
  let member: Sandbox | undefined;
  let rest: RestClient;
  let other: RestClient;
  /** A checkout as the doc assumes: the chart where it says, and the user's values file. */
  const checkout = join(logs, 'checkout');
  const n = (): RealNodeCluster => node ?? assert.fail('no node');
  const labels = { 'pod-test': 'yes' };

  async function runDoc(section: string): Promise<void> {
    const { run } = await import('../support/real-node/exec.ts');
    const out = await run('bash', ['-c', migrationScript(section)], { cwd: checkout, env: { PATH: `${TOOLS_BIN_DIR}:${process.env['PATH'] ?? ''}`, KUBECONFIG: n().kubeconfigPath }, timeoutMs: 600_000 });
    console.log(`# ${section}: ${out.trim().split('\n').slice(-3).join(' | ')}`);
  }

  async function managerImage(): Promise<string> {
    const pods = (await rest.list<Pod>(PODS, { namespace: NS, labelSelector: SELECTOR })).items.filter((p) => !p.metadata.deletionTimestamp);
    if (pods.length !== 1 || !pods.every(ready)) throw new Error(pods.map((p) => `${p.metadata.name ?? ''} ${p.status?.phase ?? ''}`).join('; ') || 'no Pod');
    return pods[0]?.spec.containers[0]?.image ?? '';
  }

  async function bothReady(): Promise<void> {
    for (const [viewer, c, name] of [[rest, 'node-cluster', 'member'], [other, 'member', 'node-cluster']] as const) {
      await eventually(`${c} to see ${name} Ready`, async () => {
        const entry = await getOrUndefined<Cluster>(viewer, CLUSTERS, undefined, name);
        if (entry?.status?.state !== 'Ready') throw new Error(`${name} on ${c}: ${JSON.stringify(entry?.status ?? 'absent')}`);
        return true;
      }, 180_000);
    }
  }

  /** Sync both ways still works: a change of each source reaches the other member, with each copy updated in place. */
  async function syncsBothWays(value: string, copies: { intoNode: Secret; intoMember: Secret }): Promise<void> {
    await other.patch(SECRETS, NS, 'from-member', 'merge', { stringData: { value } });
    await rest.patch(SECRETS, NS, 'from-node', 'merge', { stringData: { value } });
    assert.equal((await holds(rest, 'from-member', value, 'the node cluster')).metadata.uid, copies.intoNode.metadata.uid, 'the copy on the node cluster is the same object');
    assert.equal((await holds(other, 'from-node', value, 'the member')).metadata.uid, copies.intoMember.metadata.uid, 'the copy on the member is the same object');
  }

  let copies: { intoNode: Secret; intoMember: Secret };

  before(async () => {
    const log = (m: string): void => console.log(`# ${m}`);
    node = await RealNodeCluster.start({ name: 'node-cluster', logDir: join(logs, 'node'), log });
    rest = await n().admin();
    // The member that stays on the Go controller, run as the other tests run it.
    member = await startSandbox({ names: ['member'], address: n().address, dir: join(logs, 'member') });
    other = await adminClient(member.cluster('member'));
    await installRegistry(other, undefined, { upstreamPeers: true });
    await startUpstreamController(member, member.cluster('member'), { namespace: NS });
    // The Go release, as upstream's chart installs it, with the image built from the Go controller.
    const { upstream } = n().images;
    await n().helm(['install', 'cluster-registry-controller', join(upstreamManifestsDir(), 'chart'), '--namespace', NS, '--create-namespace', '--set', 'localCluster.name=node-cluster', '--set', `image.repository=${upstream.repository}`, '--set', `image.tag=${upstream.tag}`, '--set', 'image.pullPolicy=Never', '--wait', '--timeout', '3m']);
    assert.equal(await eventually('the Go controller Pod', managerImage, 120_000), upstream.ref);
    await kubectlSwap(n().cluster, member.cluster('member'), 'secret-first');
    await bothReady();
    await rest.create(RULES, undefined, rule('pod-test-secrets', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: labels }] }] }] }));
    await other.create(SECRETS, NS, secret(NS, 'from-member', { value: 'go' }, { labels }));
    await rest.create(SECRETS, NS, secret(NS, 'from-node', { value: 'go' }, { labels }));
    copies = { intoNode: await holds(rest, 'from-member', 'go', 'the node cluster'), intoMember: await holds(other, 'from-node', 'go', 'the member') };
    // The user's checkout: the chart, and their values.
    mkdirSync(checkout, { recursive: true });
    symlinkSync(join(PACKAGE_ROOT, 'deploy'), join(checkout, 'deploy'));
    const { controller } = n().images;
    writeFileSync(join(checkout, 'my-values.yaml'), `localCluster:\n  name: node-cluster\nimage:\n  repository: ${controller.repository}\n  tag: "${controller.tag}"\n  pullPolicy: Never\n`);
  });

  after(async () => {
    other?.close();
    rest?.close();
    await member?.stop();
    if (!node) return;
    await node.stop();
    assert.deepEqual(await node.leftovers(), [], 'the host is as it was before the node started');
  });

  it('upgrades the release to our chart and image: copies keep their uid, both members stay Ready, and sync goes on both ways', async () => {
    await runDoc('Upgrade a member in place');
    assert.equal(await eventually('our controller Pod', managerImage, 180_000), n().images.controller.ref);
    await bothReady();
    await syncsBothWays('ours', copies);
    // The Go member reads this cluster's credentials with the reader our chart grants, after a restart too.
    const go = member?.cluster('member').extras.find((c) => c.name.startsWith('upstream controller'));
    await go?.restart();
    await bothReady();
    await syncsBothWays('ours-after-go-restart', copies);
  });

  it('goes back to the Go release with helm rollback, and sync goes on both ways', async () => {
    await runDoc('Go back');
    assert.equal(await eventually('the Go controller Pod again', managerImage, 180_000), n().images.upstream.ref);
    await bothReady();
    await syncsBothWays('go-again', copies);
  });
});
