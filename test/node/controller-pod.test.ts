// The controller as users run it: our image, built from the Dockerfile as it is, installed with
// our chart onto a cluster with a real node (kubelet, containerd, kube-proxy), joined to two
// sandbox clusters, and run there through what a Pod lives through: a token the kubelet rotates,
// restarts, upgrades and a leader's Pod deleted; then the Go controller's release upgraded to ours
// in place and back, as docs/migration.md says. After each node stops, the test checks that the
// host is as it was.
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
import { RealNodeCluster, type AuditEvent } from '../support/real-node/cluster.ts';
import { run } from '../support/exec.ts';
import { imageConfig, imagePaths } from '../support/real-node/image-archive.ts';
import { buildImages, type Images } from '../support/real-node/images.ts';
import { freshLogDir, getOrUndefined, goneFrom, kubectlSwap, rule, secret, secretValueOn } from '../support/sync-helpers.ts';
import { startUpstreamController, upstreamManifestsDir } from '../support/upstream.ts';

const NODE = 'node-cluster';
const NS = 'cluster-registry';
const RELEASE = 'cluster-registry';
const CHART = join(PACKAGE_ROOT, 'deploy', 'charts', 'cluster-registry');
const SELECTOR = 'app.kubernetes.io/name=cluster-registry-controller';
const CONTROLLER_USER = `system:serviceaccount:${NS}:cluster-registry-controller`;
const PODS = { group: '', version: 'v1', resource: 'pods' };
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' };
const WEBHOOKS = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' };
const PEERS = ['peer1', 'peer2'] as const;
const LABELS = { 'pod-test': 'yes' };
const SYNC_RULE = rule('pod-test-secrets', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: LABELS }] }] }] });

interface Pod extends KubeObject {
  spec: { nodeName?: string; containers: { name: string; image: string }[] };
  status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[]; containerStatuses?: { name: string; ready: boolean; restartCount: number; containerID?: string }[] };
}

const ready = (p: Pod): boolean => !p.metadata.deletionTimestamp && (p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);

/** The Ready controller Pods, once there are exactly `count` and no other. */
function readyPods(rest: RestClient, count: number): Promise<Pod[]> {
  return eventually(`${count} Ready controller Pod(s)`, async () => {
    const pods = (await rest.list<Pod>(PODS, { namespace: NS, labelSelector: SELECTOR })).items;
    if (pods.length !== count || !pods.every(ready)) throw new Error(pods.map((p) => `${p.metadata.name ?? ''}: ${p.status?.phase ?? ''} ${JSON.stringify(p.status?.containerStatuses ?? [])}`).join('; ') || 'no Pods');
    return pods;
  }, 180_000);
}

/** A Secret synced by the test rule, once its value on a member is `value`. */
function holds(on: RestClient, name: string, value: string, label: string): Promise<Secret> {
  return secretValueOn(on, label, NS, name, 'value', value, 120_000);
}

function gone(on: RestClient, name: string, label: string): Promise<true> {
  return goneFrom(on, label, SECRETS, NS, name, 120_000);
}

const version = (s: Secret): string => `${s.metadata.uid ?? ''}@${s.metadata.resourceVersion ?? ''}`;
const podOf = (e: AuditEvent): string => e.user?.extra?.['authentication.kubernetes.io/pod-name']?.[0] ?? '';
const credentialOf = (e: AuditEvent): string => e.user?.extra?.['authentication.kubernetes.io/credential-id']?.[0] ?? '';
/** A write that changes what the cluster holds: not an Event, nor a question (token and access reviews are creates too). */
const isWrite = (e: AuditEvent): boolean => ['create', 'update', 'patch', 'delete'].includes(e.verb) && !/^(events|tokenreviews|subjectaccessreviews|selfsubjectaccessreviews|localsubjectaccessreviews)$/.test(e.objectRef?.resource ?? '');

/**
 * A real node for one suite: images built in their own hook (each hook has the runner's time
 * limit), the start kept as a promise so that `after` stops a node whose start outlived its hook,
 * and the host checked after the stop.
 */
function realNodeFor(suite: string): { node: () => RealNodeCluster; logs: () => string } {
  let images: Images | undefined;
  let starting: Promise<RealNodeCluster> | undefined;
  let started: RealNodeCluster | undefined;
  let logs = '';
  before(async () => {
    logs = freshLogDir(suite);
    const t = Date.now();
    images = await buildImages((m) => console.log(`# ${m}`));
    console.log(`# images ready in ${Math.round((Date.now() - t) / 1000)} s`);
  });
  before(async () => {
    const t = Date.now();
    starting = RealNodeCluster.start({ name: NODE, logDir: join(logs, 'node'), images: images ?? assert.fail('no images'), log: (m) => console.log(`# ${m}`) });
    started = await starting;
    console.log(`# real node ready in ${Math.round((Date.now() - t) / 1000)} s`);
  });
  after(async () => {
    const node = await starting?.catch(() => undefined);
    if (!node) return;
    const t = Date.now();
    await node.stop();
    console.log(`# real node stopped in ${Math.round((Date.now() - t) / 1000)} s`);
    assert.deepEqual(await node.leftovers(), [], 'the host is as it was before the node started');
  });
  return { node: () => started ?? assert.fail('the real node did not start'), logs: () => logs };
}

describe('the controller as a Pod on a real node', () => {
  const real = realNodeFor('real-node');
  let peers: Sandbox | undefined;
  let rest: RestClient;
  const clients = new Map<string, RestClient>();
  const peer = (name: string): RestClient => clients.get(name) ?? assert.fail(`no client of ${name}`);
  const images = (): Images => real.node().images;

  before(async () => {
    const node = real.node();
    rest = await node.admin();
    peers = await startGroup({ names: [...PEERS], address: node.hostAddress, dir: join(real.logs(), 'peers'), join: true });
    for (const p of PEERS) clients.set(p, await adminClient(peers.cluster(p)));
    await node.helm(['install', RELEASE, CHART, '--namespace', NS, '--create-namespace', '--set', `localCluster.name=${NODE}`, ...imageValues(images()), '--wait', '--timeout', '3m']);
    for (const p of PEERS) {
      const r = await cli(['join', '--kubeconfig', node.kubeconfigPath, '--peer-kubeconfig', peers.cluster(p).kubeconfigPath, '--namespace', NS]);
      assert.equal(r.code, 0, r.stderr);
    }
    await rest.create(RULES, undefined, SYNC_RULE);
  });

  after(async () => {
    for (const c of clients.values()) c.close();
    rest?.close();
    await peers?.stop();
  });

  it('ships an image built from the Dockerfile as it is: numeric non-root user, the entry point, production dependencies only, within its size', async () => {
    const { controller, base } = images();
    const config = await imageConfig(controller.archive);
    assert.equal(config.User, '1000:1000');
    assert.deepEqual(config.Entrypoint, ['node', '/app/bin/cluster-registry.js']);
    assert.deepEqual(config.Cmd, ['controller']);
    assert.ok(config.Env?.includes('NODE_ENV=production'));
    assert.ok(config.Env?.includes('LD_PRELOAD=/usr/local/lib/libjemalloc.so.2'), 'jemalloc preloaded');
    const paths = await imagePaths(controller.archive);
    assert.ok(paths.has('usr/local/lib/libjemalloc.so.2'), 'the link to the preloaded allocator');
    assert.ok([...paths].some((p) => /^usr\/lib\/[^/]+-linux-gnu\/libjemalloc\.so\.2$/.test(p)), 'the allocator the link points at');
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

  it("installs with helm: the Pod is Ready under the chart's restrictions, serves its probes, its webhook answers through the Service, and the local Cluster and reader Secret are made", async () => {
    const [pod] = await readyPods(rest, 1);
    assert.ok(pod);
    assert.equal(pod.spec.nodeName, NODE);
    assert.equal(pod.spec.containers[0]?.image, images().controller.ref);
    // What containerd runs is what the chart asks for.
    const spec = (await real.node().containerSpec('manager', pod.metadata.name ?? '')) as { root?: { readonly?: boolean }; process?: { user?: { uid?: number }; capabilities?: { bounding?: string[] } }; linux?: { seccomp?: unknown } };
    assert.equal(spec.root?.readonly, true, 'read-only root filesystem');
    assert.equal(spec.process?.user?.uid, 1000, 'runs as the image user');
    assert.deepEqual(spec.process?.capabilities?.bounding ?? [], [], 'no capabilities');
    assert.ok(spec.linux?.seccomp, 'a seccomp profile');
    // The probes the kubelet asks, asked directly too (the host reaches Pods through the node).
    for (const path of ['/healthz', '/readyz']) assert.equal((await probe(`http://${pod.status?.podIP ?? ''}:8090${path}`))?.status, 200, path);
    // The webhook is registered by its Service, and refuses a second local Cluster once the leader
    // has published its CA (a dry run: nothing is left behind if it has not yet).
    const [hook] = (await rest.list<KubeObject & { webhooks: { clientConfig: { service?: unknown; url?: string } }[] }>(WEBHOOKS)).items.filter((w) => w.metadata.name?.startsWith('cluster-registry'));
    assert.ok(hook?.webhooks[0]?.clientConfig.service && !hook.webhooks[0].clientConfig.url, 'registered by Service');
    const local = await eventually('the local Cluster', () => getOrUndefined<Cluster>(rest, CLUSTERS, undefined, NODE));
    await eventually('the webhook to refuse a second local Cluster', async () => {
      const second = { apiVersion: local.apiVersion, kind: 'Cluster', metadata: { name: 'second-local' }, spec: { clusterID: local.spec.clusterID } };
      const refused = await rest.create(CLUSTERS, undefined, second, { dryRun: true }).then(() => undefined, (err: Error) => err);
      if (!refused) throw new Error('admitted');
      assert.match(refused.message, /already exists with the same clusterID/);
      return true;
    });
    const reader = await eventually('the reader Secret', () => getOrUndefined<Secret>(rest, SECRETS, NS, NODE));
    assert.equal(reader.type, 'k8s.cisco.com/cluster-registry-secret');
    assert.ok((secretText(reader, 'kubeconfig') ?? '').includes(`server: ${real.node().cluster.server}`), 'peers reach the node where it serves');
  });

  it('was joined to two sandbox clusters with `join`: each member sees the others Ready, a rule syncs into its cluster and out of it, and a change and a deletion follow', async () => {
    for (const [viewer, client] of [[NODE, rest], ...PEERS.map((p) => [p, peer(p)] as const)] as const) {
      await eventually(`${viewer} to see the group Ready`, async () => {
        const { items } = await client.list<Cluster>(CLUSTERS);
        if (items.length !== 3 || !items.every((c) => c.status?.state === 'Ready')) throw new Error(items.map((c) => `${c.metadata.name ?? ''}: ${c.status?.state ?? '-'}`).join('; '));
        return true;
      }, 120_000);
    }
    await peer('peer1').create(SECRETS, NS, secret(NS, 'from-peer1', { value: 'one' }, { labels: LABELS }));
    await rest.create(SECRETS, NS, secret(NS, 'from-node', { value: 'one' }, { labels: LABELS }));
    await holds(rest, 'from-peer1', 'one', 'the node cluster');
    for (const p of PEERS) await holds(peer(p), 'from-node', 'one', p);
    await peer('peer1').patch(SECRETS, NS, 'from-peer1', 'merge', { stringData: { value: 'two' } });
    await rest.patch(SECRETS, NS, 'from-node', 'merge', { stringData: { value: 'two' } });
    await holds(rest, 'from-peer1', 'two', 'the node cluster');
    for (const p of PEERS) await holds(peer(p), 'from-node', 'two', p);
    await peer('peer1').delete(SECRETS, NS, 'from-peer1');
    await gone(rest, 'from-peer1', 'the node cluster');
    await rest.delete(SECRETS, NS, 'from-node');
    for (const p of PEERS) await gone(peer(p), 'from-node', p);
  });

  it('keeps working when the kubelet rotates its ServiceAccount token: its requests carry the new token', async () => {
    const [pod] = await readyPods(rest, 1);
    const uid = pod?.metadata.uid ?? assert.fail('no pod');
    const container = pod?.status?.containerStatuses?.[0];
    const jti = (token: string): string => (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { jti: string }).jti;
    const before = jti(real.node().podToken(uid));
    await eventually('the audit log to name the token the controller uses', () => real.node().auditEvents(CONTROLLER_USER).some((e) => credentialOf(e) === `JTI=${before}`));
    // A kubelet that starts again has no token cached: it asks for a new one and writes it into
    // the Pod's projected volume, as it does when the old one nears its expiry. The container
    // keeps running: only the file changes under it.
    await real.node().kubelet.restart();
    const rotated = await eventually('the kubelet to write a new token', () => {
      const now = jti(real.node().podToken(uid));
      return now !== before ? now : undefined;
    }, 120_000);
    const [same] = await readyPods(rest, 1);
    assert.deepEqual([same?.metadata.uid, same?.status?.containerStatuses?.[0]?.containerID, same?.status?.containerStatuses?.[0]?.restartCount], [uid, container?.containerID, container?.restartCount], 'the same container, not restarted');
    // Every client of the controller re-reads the file within a minute: then its newest requests all carry the new token.
    await eventually('the controller to send only the rotated token', () => {
      const recent = real.node().auditEvents(CONTROLLER_USER).filter((e) => e.verb !== 'watch').slice(-20);
      return recent.length === 20 && recent.every((e) => credentialOf(e) === `JTI=${rotated}`);
    }, 150_000);
    await peer('peer2').create(SECRETS, NS, secret(NS, 'after-rotation', { value: 'x' }, { labels: LABELS }));
    await holds(rest, 'after-rotation', 'x', 'the node cluster');
    const refused = real.node().auditEvents(CONTROLLER_USER).filter((e) => e.responseStatus?.code === 401);
    assert.deepEqual(refused, [], 'no request of the controller was refused');
    await peer('peer2').delete(SECRETS, NS, 'after-rotation');
    await gone(rest, 'after-rotation', 'the node cluster');
  });

  it('loses nothing and rewrites no copy across a Pod restart and a helm upgrade', async () => {
    // `steady` never changes: its copy here must not be written again. `moving` changes while no
    // controller runs, and while the upgrade rolls: each change must arrive.
    await peer('peer1').create(SECRETS, NS, secret(NS, 'steady', { value: 'v1' }, { labels: LABELS }));
    await peer('peer1').create(SECRETS, NS, secret(NS, 'moving', { value: 'v1' }, { labels: LABELS }));
    const steady = await holds(rest, 'steady', 'v1', 'the node cluster');
    const moving = await holds(rest, 'moving', 'v1', 'the node cluster');

    // A restart with a gap: no controller runs while the source changes.
    const [first] = await readyPods(rest, 1);
    await rest.patch(DEPLOYMENTS, NS, 'cluster-registry-controller', 'merge', { spec: { replicas: 0 } });
    await eventually('no controller Pod', async () => (await rest.list<Pod>(PODS, { namespace: NS, labelSelector: SELECTOR })).items.length === 0 || undefined, 120_000);
    await peer('peer1').patch(SECRETS, NS, 'moving', 'merge', { stringData: { value: 'during-restart' } });
    await rest.patch(DEPLOYMENTS, NS, 'cluster-registry-controller', 'merge', { spec: { replicas: 1 } });
    const [second] = await readyPods(rest, 1);
    assert.notEqual(second?.metadata.uid, first?.metadata.uid, 'a new Pod');
    assert.equal((await holds(rest, 'moving', 'during-restart', 'the node cluster')).metadata.uid, moving.metadata.uid, 'updated in place');

    const upgrade = real.node().helm(['upgrade', RELEASE, CHART, '--namespace', NS, '--reuse-values', '--set', 'controller.log.verbosity=1', '--wait', '--timeout', '3m']);
    await peer('peer1').patch(SECRETS, NS, 'moving', 'merge', { stringData: { value: 'during-upgrade' } });
    await upgrade;
    const [third] = await readyPods(rest, 1);
    assert.notEqual(third?.metadata.uid, second?.metadata.uid, 'the upgrade rolled the Pod');
    assert.equal((await holds(rest, 'moving', 'during-upgrade', 'the node cluster')).metadata.uid, moving.metadata.uid, 'updated in place');
    // A change after both still arrives, and then the copy that never changed is as it was.
    await peer('peer1').patch(SECRETS, NS, 'moving', 'merge', { stringData: { value: 'after' } });
    await holds(rest, 'moving', 'after', 'the node cluster');
    assert.equal(version(await rest.get<Secret>(SECRETS, NS, 'steady')), version(steady), 'the unchanged copy was not written again');
    assert.equal((await rest.get<Cluster>(CLUSTERS, undefined, NODE)).spec.clusterID, (await peer('peer1').get<Cluster>(CLUSTERS, undefined, NODE)).spec.clusterID, 'the same identity');
    for (const name of ['steady', 'moving']) await peer('peer1').delete(SECRETS, NS, name);
    for (const name of ['steady', 'moving']) await gone(rest, name, 'the node cluster');
  });

  it("with two replicas, the other Pod leads within the lease when the leader's Pod is deleted, and the two never work at once", async () => {
    await real.node().helm(['upgrade', RELEASE, CHART, '--namespace', NS, '--reuse-values', '--set', 'replicas=2', '--wait', '--timeout', '3m']);
    const pods = await readyPods(rest, 2);
    const lease = await eventually('a leader', async () => {
      const l = await getOrUndefined<Lease>(rest, LEASES, NS, 'cluster-registry-leader-election');
      return l?.spec?.holderIdentity ? l : undefined;
    });
    const leader = pods.find((p) => lease.spec?.holderIdentity?.startsWith(`${p.metadata.name ?? '-'}_`));
    const standby = pods.find((p) => p !== leader);
    assert.ok(leader?.metadata.name && standby?.metadata.name, `the holder ${lease.spec?.holderIdentity ?? ''} is one of the Pods`);
    // The node is cordoned first, as for a drain, so that the Pod replacing the leader waits and
    // only the standby can take over.
    await rest.patch(NODES, undefined, NODE, 'merge', { spec: { unschedulable: true } });
    const deleted = Date.now();
    try {
      await rest.delete(PODS, NS, leader.metadata.name);
      await eventually('the standby to lead', async () => {
        const l = await rest.get<Lease>(LEASES, NS, 'cluster-registry-leader-election');
        return l.spec?.holderIdentity?.startsWith(`${standby.metadata.name ?? '-'}_`) || undefined;
      }, 60_000);
      const took = Date.now() - deleted;
      assert.ok(took <= 15_000, `took over in ${took} ms, within the 15 s lease`);
      // The group stays in sync under the new leader.
      await peer('peer1').create(SECRETS, NS, secret(NS, 'after-failover', { value: 'x' }, { labels: LABELS }));
      await holds(rest, 'after-failover', 'x', 'the node cluster');
      // Never two at work: from its start until the leader's last write (its release of the lease),
      // the standby wrote nothing but its campaign for the lease; then it did the work.
      const events = real.node().auditEvents(CONTROLLER_USER).filter(isWrite);
      const leaderLast = Math.max(...events.filter((e) => podOf(e) === leader.metadata.name).map((e) => Date.parse(e.stageTimestamp)));
      const standbyWork = events.filter((e) => podOf(e) === standby.metadata.name && e.objectRef?.resource !== 'leases');
      assert.ok(Number.isFinite(leaderLast) && standbyWork.length > 0, 'both Pods wrote');
      const early = standbyWork.filter((e) => Date.parse(e.requestReceivedTimestamp) < leaderLast);
      assert.deepEqual(early.map((e) => `${e.verb} ${e.requestURI}`), [], 'the standby wrote nothing while the leader led');
    } finally {
      await rest.patch(NODES, undefined, NODE, 'merge', { spec: { unschedulable: false } });
    }
    await peer('peer1').delete(SECRETS, NS, 'after-failover');
    await real.node().helm(['upgrade', RELEASE, CHART, '--namespace', NS, '--reuse-values', '--set', 'replicas=1', '--wait', '--timeout', '3m']);
  });
});

function imageValues(images: Images): string[] {
  return ['--set', `image.repository=${images.controller.repository}`, '--set', `image.tag=${images.controller.tag}`, '--set', 'image.pullPolicy=Never'];
}

/** The shell blocks of a section of docs/migration.md (after those of "Before you start", which set the names), as one script. */
function migrationScript(section: string): string {
  const doc = readFileSync(join(PACKAGE_ROOT, 'docs', 'migration.md'), 'utf8');
  const blocks = (title: string): string[] => {
    const start = doc.indexOf(`\n## ${title}\n`);
    assert.ok(start >= 0, `docs/migration.md has a section "${title}"`);
    const end = doc.indexOf('\n## ', start + 1);
    const text = doc.slice(start, end < 0 ? undefined : end);
    const fences = [...text.matchAll(/^ *```(\w*)$/gm)].map((m) => m[1]);
    assert.ok(fences.every((f, i) => (i % 2 === 0 ? f === 'sh' : f === '')), `every block of "${title}" is a sh block, run as written`);
    return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => (m[1] ?? '').replace(/^ {2}/gm, ''));
  };
  const commands = blocks(section);
  assert.ok(commands.length > 0, `"${section}" has commands`);
  return ['set -euo pipefail', ...blocks('Before you start'), ...commands].join('\n');
}

describe("the Go controller's release upgraded to ours in place, and back, as docs/migration.md says", () => {
  const real = realNodeFor('real-node-migration');
  let member: Sandbox | undefined;
  let rest: RestClient;
  let other: RestClient;
  let copies: { intoNode: Secret; intoMember: Secret };

  async function runDoc(section: string): Promise<void> {
    const checkout = join(real.logs(), 'checkout');
    const out = await run('bash', ['-c', migrationScript(section)], { cwd: checkout, env: { PATH: `${TOOLS_BIN_DIR}:${process.env['PATH'] ?? ''}`, KUBECONFIG: real.node().kubeconfigPath }, timeoutMs: 600_000 });
    console.log(`# ${section}: ${out.trim().split('\n').slice(-2).join(' | ')}`);
  }

  /** The image of the one Ready controller Pod. */
  async function controllerImage(): Promise<string> {
    return (await readyPods(rest, 1))[0]?.spec.containers[0]?.image ?? '';
  }

  /** Each member sees the other Ready; on `fresh`, with a status written after that moment (not one left from before). */
  async function bothReady(fresh?: { viewer: RestClient; entry: string; since: number }): Promise<void> {
    for (const [viewer, entry] of [[rest, 'member'], [other, NODE]] as const) {
      await eventually(`${entry} to be Ready`, async () => {
        const c = await getOrUndefined<Cluster>(viewer, CLUSTERS, undefined, entry);
        const heartbeat = Date.parse(c?.status?.conditions?.find((x) => x.type === 'Ready')?.lastHeartbeatTime ?? '');
        const isFresh = !fresh || fresh.viewer !== viewer || fresh.entry !== entry || heartbeat > fresh.since;
        if (c?.status?.state !== 'Ready' || !isFresh) throw new Error(`${entry}: ${JSON.stringify(c?.status ?? 'absent')}`);
        return true;
      }, 180_000);
    }
  }

  /** A change of each source reaches the other member, each copy updated in place. */
  async function syncsBothWays(value: string): Promise<void> {
    await other.patch(SECRETS, NS, 'from-member', 'merge', { stringData: { value } });
    await rest.patch(SECRETS, NS, 'from-node', 'merge', { stringData: { value } });
    assert.equal((await holds(rest, 'from-member', value, 'the node cluster')).metadata.uid, copies.intoNode.metadata.uid, 'the copy on the node cluster is the same object');
    assert.equal((await holds(other, 'from-node', value, 'the member')).metadata.uid, copies.intoMember.metadata.uid, 'the copy on the member is the same object');
  }

  before(async () => {
    const node = real.node();
    rest = await node.admin();
    // The member that stays on the Go controller.
    member = await startSandbox({ names: ['member'], address: node.hostAddress, dir: join(real.logs(), 'member') });
    other = await adminClient(member.cluster('member'));
    await installRegistry(other, undefined, { upstreamPeers: true });
    await startUpstreamController(member, member.cluster('member'), { namespace: NS });
    // The Go release, as upstream's chart installs it, with the image built from the Go controller.
    const { upstream, controller } = node.images;
    await node.helm(['install', 'cluster-registry-controller', join(upstreamManifestsDir(), 'chart'), '--namespace', NS, '--create-namespace', '--set', `localCluster.name=${NODE}`, '--set', `image.repository=${upstream.repository}`, '--set', `image.tag=${upstream.tag}`, '--set', 'image.pullPolicy=Never', '--wait', '--timeout', '3m']);
    assert.equal(await controllerImage(), upstream.ref);
    await kubectlSwap(node.cluster, member.cluster('member'), 'secret-first');
    await bothReady();
    await rest.create(RULES, undefined, SYNC_RULE);
    await other.create(SECRETS, NS, secret(NS, 'from-member', { value: 'go' }, { labels: LABELS }));
    await rest.create(SECRETS, NS, secret(NS, 'from-node', { value: 'go' }, { labels: LABELS }));
    copies = { intoNode: await holds(rest, 'from-member', 'go', 'the node cluster'), intoMember: await holds(other, 'from-node', 'go', 'the member') };
    // The user's checkout, as the doc assumes: the chart where it says, and their values.
    const checkout = join(real.logs(), 'checkout');
    mkdirSync(checkout, { recursive: true });
    symlinkSync(join(PACKAGE_ROOT, 'deploy'), join(checkout, 'deploy'));
    writeFileSync(join(checkout, 'my-values.yaml'), `localCluster:\n  name: ${NODE}\nimage:\n  repository: ${controller.repository}\n  tag: "${controller.tag}"\n  pullPolicy: Never\n`);
  });

  after(async () => {
    other?.close();
    rest?.close();
    await member?.stop();
  });

  it('upgrades the release to our chart and image: copies keep their uid, both members stay Ready, and sync goes on both ways', async () => {
    const since = Date.now();
    await runDoc('Upgrade a member in place');
    assert.equal(await controllerImage(), real.node().images.controller.ref);
    await bothReady({ viewer: rest, entry: 'member', since });
    await syncsBothWays('ours');
    // The Go member reads this cluster with the reader our chart grants, after its restart too
    // (its watch opened before the upgrade no longer counts).
    const go = member?.cluster('member').extras.find((c) => c.name.startsWith('upstream controller')) ?? assert.fail('no Go controller on the member');
    await go.restart();
    await bothReady();
    await syncsBothWays('ours-after-go-restart');
  });

  it('goes back to the Go release with helm rollback, and sync goes on both ways', async () => {
    await runDoc('Go back');
    assert.equal(await controllerImage(), real.node().images.upstream.ref);
    await bothReady();
    await syncsBothWays('go-again');
  });
});
