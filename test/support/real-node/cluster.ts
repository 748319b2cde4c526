// A Kubernetes cluster with one real node, for the tests that run the controller as users do: as
// a Pod from its image and chart. Everything runs inside the node's own network and mount
// namespaces (namespace.ts): the sandbox's control plane (etcd, kube-apiserver with the Node
// authorizer, a kube-controller-manager with the workload controllers), kube-scheduler, and the
// node itself: a kubelet on a containerd of its own with the bridge CNI plugin, and kube-proxy in
// iptables mode. The host keeps only the veth to it, the kubelet's cgroups and its kernel settings
// (host.ts), all undone at stop, or at the next start after a run was killed. Sandbox clusters
// started on `hostAddress` are reachable from the Pods.
import { cpSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RestClient } from '../../../src/kube/index.ts';
import { apiServerComponent } from '../../../src/sandbox/apiserver.ts';
import { CHEAP_CONTROLLERS, controllerManagerComponent } from '../../../src/sandbox/controller-manager.ts';
import { writeCredentials } from '../../../src/sandbox/credentials.ts';
import { Etcd } from '../../../src/sandbox/etcd.ts';
import { Component, PACKAGE_ROOT, SandboxCluster, tokenKubeconfig, toolPath } from '../../../src/sandbox/index.ts';
import { freePort } from '../../../src/sandbox/net.ts';
import { adminClient } from '../../../src/testbed/group.ts';
import { containerdComponent, containerdSocket, kubeletComponent, kubeProxyComponent, schedulerComponent, type NodeSettings } from './components.ts';
import { attempt, run } from '../exec.ts';
import { HostSnapshot, hostChanges, prepareHost, undoHost, type HostChanges } from './host.ts';
import type { Images } from './images.ts';
import { NodeNamespace, killNetns, linkExists, pickAddresses, processStartTime } from './namespace.ts';

type Log = (message: string) => void;

export interface RealNodeOptions {
  /** Cluster (and node) name. */
  readonly name: string;
  /** Where logs go (the Pods' too), kept after stop for a post-mortem. */
  readonly logDir: string;
  readonly images: Images;
  readonly log?: Log;
}

export interface AuditEvent {
  readonly verb: string;
  readonly requestURI: string;
  readonly requestReceivedTimestamp: string;
  readonly stageTimestamp: string;
  readonly user?: { username?: string; extra?: Record<string, string[]> };
  readonly objectRef?: { resource?: string; namespace?: string; name?: string };
  readonly responseStatus?: { code?: number };
}

/** The workload controllers a Deployment and a Service need, and the node lifecycle one that lifts a Ready node's not-ready taint. */
const WORKLOAD_CONTROLLERS = [
  ...CHEAP_CONTROLLERS,
  'root-ca-certificate-publisher-controller',
  'deployment-controller',
  'replicaset-controller',
  'endpoints-controller',
  'endpointslice-controller',
  'endpointslice-mirroring-controller',
  'disruption-controller',
  'node-lifecycle-controller',
];

export class RealNodeCluster implements AsyncDisposable {
  readonly name: string;
  /** Where sandbox clusters must listen for the node's Pods to reach them. */
  readonly hostAddress: string;
  readonly cluster: SandboxCluster;
  readonly images: Images;
  readonly kubelet: Component;
  private readonly node: RunningNode;
  private stopped = false;

  private constructor(name: string, cluster: SandboxCluster, images: Images, kubelet: Component, node: RunningNode) {
    this.name = name;
    this.images = images;
    this.hostAddress = node.ns.addresses.host;
    this.cluster = cluster;
    this.kubelet = kubelet;
    this.node = node;
  }

  get kubeconfigPath(): string {
    return this.cluster.kubeconfigPath;
  }

  admin(): Promise<RestClient> {
    return adminClient(this.cluster);
  }

  /** helm against this cluster, as a user runs it; throws with its output when it fails. */
  helm(args: readonly string[]): Promise<string> {
    return run(toolPath('helm'), [...args, '--kubeconfig', this.cluster.kubeconfigPath], { timeoutMs: 300_000 });
  }

  /** The OCI spec containerd gave a running container of a Pod. */
  async containerSpec(containerName: string, podName: string): Promise<Record<string, unknown>> {
    for (const id of (await ctr(this.node.state, ['containers', 'list', '--quiet'])).split('\n').filter(Boolean)) {
      const info = JSON.parse(await ctr(this.node.state, ['containers', 'info', id])) as { Labels?: Record<string, string>; Spec?: Record<string, unknown> };
      if (info.Labels?.['io.kubernetes.container.name'] === containerName && info.Labels['io.kubernetes.pod.name'] === podName) return info.Spec ?? {};
    }
    throw new Error(`no container ${containerName} of pod ${podName} on the node`);
  }

  /** The token the kubelet last wrote into a Pod's projected ServiceAccount volume (a tmpfs seen through the node's mount namespace). */
  podToken(podUid: string): string {
    const dir = `/proc/${this.node.ns.pid}/root${join(this.node.state, 'kubelet', 'pods', podUid, 'volumes', 'kubernetes.io~projected')}`;
    const volume = readdirSync(dir).find((v) => v.startsWith('kube-api-access-'));
    if (!volume) throw new Error(`pod ${podUid} has no kube-api-access volume`);
    return readFileSync(join(dir, volume, 'token'), 'utf8');
  }

  /**
   * The API server's audit events of ServiceAccounts, oldest first: which identity, Pod and
   * credential (a token's JTI) each request came with. A line still being written is left out.
   */
  auditEvents(user: string): AuditEvent[] {
    const file = join(this.node.state, 'audit.log');
    if (!existsSync(file)) return [];
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.pop();
    return lines.map((l) => JSON.parse(l) as AuditEvent).filter((e) => e.user?.username === user);
  }

  /** Stops every process and undoes what the node changed on the host. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.node.teardown();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /** What differs on the host from before the node started, and what of the node is still there. */
  leftovers(): Promise<string[]> {
    return this.node.leftovers();
  }

  /** Starts the cluster and returns once its node is Ready; a failure on the way undoes what was started. */
  static async start(opts: RealNodeOptions): Promise<RealNodeCluster> {
    const log = opts.log ?? (() => undefined);
    if (process.getuid?.() !== 0) throw new Error('a real node needs root: it makes namespaces, a veth and cgroups');
    // Inside the node, /run, /var/lib and /var/log are its own: what lives there on the host is hidden from it.
    const hidden = [PACKAGE_ROOT, tmpdir()].find((p) => /^\/(run|var\/lib|var\/log)(\/|$)/.test(p));
    if (hidden) throw new Error(`a real node cannot run from ${hidden}: /run, /var/lib and /var/log are the node's own inside it`);
    mkdirSync(opts.logDir, { recursive: true });
    const node = await RunningNode.claim(opts.logDir, log);
    try {
      const { ns, state } = node;
      const { name } = opts;
      const addresses = ns.addresses;
      const settings: NodeSettings = { name, state, logDir: opts.logDir, addresses, launcher: ns.launcher };
      const credentials = writeCredentials(state, [
        { name: `system:node:${name}`, groups: ['system:nodes'] },
        { name: 'system:kube-proxy' },
      ]);
      // ServiceAccounts' requests are audited (metadata only): which token and Pod each came from.
      const auditPolicy = join(state, 'audit-policy.yaml');
      writeFileSync(auditPolicy, JSON.stringify({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', omitStages: ['RequestReceived'], rules: [{ level: 'Metadata', userGroups: ['system:serviceaccounts'] }, { level: 'None' }] }));

      const etcd = await Etcd.create({ dataDir: join(state, 'etcd'), logFile: join(opts.logDir, 'etcd.log'), detached: false, address: addresses.node, launcher: settings.launcher });
      node.components.push(etcd);
      log(`starting the control plane of ${name} on ${addresses.node}`);
      await etcd.start();
      const port = await freePort();
      const apiserver = apiServerComponent({
        clusterName: name,
        port,
        address: addresses.node,
        etcdURL: etcd.clientURL,
        certDir: state,
        credentials,
        logFile: join(opts.logDir, 'apiserver.log'),
        detached: false,
        serviceRange: addresses.serviceRange,
        authorization: ['Node', 'RBAC'],
        launcher: settings.launcher,
        extraArgs: ['--enable-admission-plugins=NodeRestriction', '--kubelet-preferred-address-types=InternalIP', `--audit-policy-file=${auditPolicy}`, `--audit-log-path=${join(state, 'audit.log')}`, '--audit-log-format=json', '--audit-log-mode=blocking'],
      });
      node.components.push(apiserver);
      await apiserver.start();
      const server = `https://${addresses.node}:${port}`;
      const caPem = readFileSync(join(state, 'apiserver.crt'), 'utf8');
      const kubeconfigOf = (user: string, token: string, file: string): string => {
        const path = join(state, file);
        writeFileSync(path, tokenKubeconfig({ name, server, caPem, user, token }), { mode: 0o600 });
        return path;
      };
      const kubeconfigPath = kubeconfigOf(`${name}-admin`, credentials.adminToken, 'admin.kubeconfig');
      const kubeletKubeconfig = kubeconfigOf(`system:node:${name}`, credentials.tokens[`system:node:${name}`] ?? '', 'kubelet.kubeconfig');
      const proxyKubeconfig = kubeconfigOf('system:kube-proxy', credentials.tokens['system:kube-proxy'] ?? '', 'kube-proxy.kubeconfig');
      const controllerManager = controllerManagerComponent({
        clusterName: name,
        kubeconfigPath,
        saKeyFile: credentials.saKeyFile,
        rootCAFile: join(state, 'apiserver.crt'),
        logFile: join(opts.logDir, 'controller-manager.log'),
        detached: false,
        controllers: WORKLOAD_CONTROLLERS,
        launcher: settings.launcher,
      });
      node.components.push(controllerManager);
      await controllerManager.start();
      const scheduler = schedulerComponent(settings, kubeconfigPath);
      node.components.push(scheduler);
      await scheduler.start();

      const containerd = containerdComponent(settings, opts.images.pause.ref);
      node.components.push(containerd);
      log('starting containerd and importing the images');
      await containerd.start();
      for (const img of Object.values(opts.images)) {
        await ctr(state, ['images', 'import', img.archive]);
      }
      const kubelet = await kubeletComponent(settings, kubeletKubeconfig, node.host.cgroup);
      node.components.push(kubelet);
      log('starting the kubelet');
      await kubelet.start();
      const proxy = await kubeProxyComponent(settings, proxyKubeconfig);
      node.components.push(proxy);
      await proxy.start();

      const cluster = new SandboxCluster({ name, server, caPem, kubeconfigPath, kubeconfig: readFileSync(kubeconfigPath, 'utf8'), apiserver, controllerManager });
      const real = new RealNodeCluster(name, cluster, opts.images, kubelet, node);
      await real.waitNodeReady();
      log(`node ${name} is Ready`);
      return real;
    } catch (err) {
      const left = await node.teardown().catch((e: unknown) => [`teardown failed: ${(e as Error).message}`]);
      if (left.length > 0) log(`after the failed start, not undone: ${left.join('; ')}`);
      throw err;
    }
  }

  private async waitNodeReady(timeoutMs = 120_000): Promise<void> {
    const rest = await this.admin();
    try {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const node = await rest.json<{ spec?: { taints?: unknown[] }; status?: { conditions?: { type: string; status: string }[] } }>({ method: 'GET', path: `/api/v1/nodes/${this.name}` }).catch(() => undefined);
        // Ready, and its not-ready taint lifted, so Pods schedule onto it.
        if (node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && !node.spec?.taints?.length) return;
        if (Date.now() > deadline) throw new Error(`node ${this.name} not Ready after ${timeoutMs / 1000}s; see the kubelet log`);
        await sleep(500);
      }
    } finally {
      rest.close();
    }
  }
}

/**
 * One real node at a time on a machine (host settings are the machine's): a journal on tmpfs (a
 * reboot undoes the changes too) names the running node's process, state, veth and host changes,
 * so a run killed before its stop is undone by the next start. It is written whole to a file of
 * its own, then linked into place: the claim is atomic, and a journal is never half written.
 */
const JOURNAL = '/run/cluster-registry-real-node.json';

interface Journal {
  readonly pid: number;
  readonly started: string;
  readonly state: string;
  readonly link: string;
  readonly host: HostChanges;
  /** The node's network namespace, once made: what still runs in it belongs to the node. */
  readonly netns?: number;
}

/** What a started node holds, and its teardown. */
class RunningNode {
  readonly components: Component[] = [];
  readonly ns: NodeNamespace;
  readonly state: string;
  readonly host: HostChanges;
  private readonly snapshot: HostSnapshot;
  private readonly logDir: string;

  private constructor(ns: NodeNamespace, state: string, host: HostChanges, snapshot: HostSnapshot, logDir: string) {
    this.ns = ns;
    this.state = state;
    this.host = host;
    this.snapshot = snapshot;
    this.logDir = logDir;
  }

  static async claim(logDir: string, log: Log): Promise<RunningNode> {
    await undoKilledRun(log);
    const snapshot = await HostSnapshot.take();
    const link = `crn${randomBytes(3).toString('hex')}`;
    const state = mkdtempSync(join(tmpdir(), 'cluster-registry-node-'));
    const host = hostChanges(`/${link}`);
    const journal: Journal = { pid: process.pid, started: processStartTime(process.pid) ?? '', state, link, host };
    const draft = `${JOURNAL}.${process.pid}`;
    writeFileSync(draft, JSON.stringify(journal), { mode: 0o600 });
    try {
      linkSync(draft, JOURNAL);
    } catch {
      rmSync(draft, { force: true });
      rmSync(state, { recursive: true, force: true });
      throw new Error(`another real node runs on this machine (${JOURNAL}); one at a time`);
    }
    rmSync(draft, { force: true });
    let ns: NodeNamespace | undefined;
    try {
      prepareHost(host);
      ns = await NodeNamespace.create(link, await pickAddresses());
      writeFileSync(draft, JSON.stringify({ ...journal, netns: ns.netnsInode() }), { mode: 0o600 });
      renameSync(draft, JOURNAL);
      return new RunningNode(ns, state, host, snapshot, logDir);
    } catch (err) {
      const left = await finish(journal, ns);
      if (left.length > 0) log(`after the failed start, not undone: ${left.join('; ')}`);
      throw err;
    }
  }

  /** Stops every process, ends the namespaces, undoes the host changes; returns what could not be undone (the journal then stays). */
  async teardown(): Promise<string[]> {
    // The node first (no Pod restarted meanwhile), then the control plane.
    for (const c of [...this.components].reverse()) await c.stop().catch(() => undefined);
    try {
      // The Pods' logs stay with the others, for a post-mortem.
      if (existsSync(join(this.state, 'pod-logs'))) cpSync(join(this.state, 'pod-logs'), join(this.logDir, 'pods'), { recursive: true, dereference: true });
    } catch {
      // a log not copied must not keep the node from being undone
    }
    return finish({ state: this.state, link: this.ns.link, host: this.host }, this.ns);
  }

  async leftovers(): Promise<string[]> {
    const found = await this.snapshot.differences();
    for (const c of this.components) if (c.process.running) found.push(`process ${c.name} (pid ${c.pid ?? ''})`);
    if (existsSync(this.state)) found.push(`directory ${this.state}`);
    if (existsSync(JOURNAL)) found.push(`journal ${JOURNAL}`);
    return found;
  }
}

/** The shared end of a teardown, also for a killed run: what runs in the Pods, the namespaces, the host changes, the state. */
async function finish(j: Pick<Journal, 'state' | 'link' | 'host' | 'netns'>, ns: NodeNamespace | undefined): Promise<string[]> {
  // Containers and shims run under the kubelet's cgroup or beside containerd, and a killed run's
  // strays in its namespace; all die here.
  // (Only while its veth is there: then the namespace of that identity is still the node's.)
  if (!ns && j.netns !== undefined && (await linkExists(j.link))) killNetns(j.netns);
  const left = await undoHost(j.host);
  for (const pid of shimPids(containerdSocket(j.state))) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  if (ns) await ns.destroy();
  else if (await linkExists(j.link)) await attempt('ip', ['link', 'delete', j.link]);
  if (await linkExists(j.link)) left.push(`link ${j.link}`);
  // Nothing inside is mounted any more (the mount namespace is gone); a shim just killed may hold a file for a moment.
  for (let i = 0; i < 20 && existsSync(j.state); i++) {
    if ((await attempt('rm', ['-rf', '--one-file-system', j.state])).code !== 0) await sleep(250);
  }
  if (existsSync(j.state)) left.push(`directory ${j.state}`);
  if (left.length === 0) releaseJournal(j.link);
  return left;
}

/** Removes the journal only when it is this node's (another run may hold it by now). */
function releaseJournal(link: string): void {
  const current = readJournal(JOURNAL);
  if (current?.link === link) rmSync(JOURNAL, { force: true });
}

/** A journal as written by `claim`; anything else is refused, never acted on. */
function readJournal(path: string): Journal | undefined {
  let j: Partial<Journal>;
  try {
    j = JSON.parse(readFileSync(path, 'utf8')) as Partial<Journal>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`unrecognised journal ${path} (${(err as Error).message}): remove it once no real node runs`);
  }
  const name = /^crn[0-9a-f]{6}$/;
  const valid =
    typeof j.pid === 'number' &&
    typeof j.started === 'string' &&
    typeof j.link === 'string' && name.test(j.link) &&
    typeof j.state === 'string' && new RegExp(`^${tmpdir().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/cluster-registry-node-[A-Za-z0-9]{6}$`).test(j.state) &&
    j.host?.cgroup === `/${j.link}` &&
    (j.netns === undefined || typeof j.netns === 'number');
  if (!valid) throw new Error(`unrecognised journal ${path}: remove it once no real node runs`);
  return j as Journal;
}

/**
 * A journal left by a run that is gone (killed, or this process after a teardown that left
 * something): taken over by renaming it, so that only one start undoes it, then undone.
 */
async function undoKilledRun(log: Log): Promise<void> {
  const j = readJournal(JOURNAL);
  if (!j) return;
  if (j.pid !== process.pid && processStartTime(j.pid) === j.started) throw new Error(`another real node runs on this machine (process ${j.pid}); one at a time`);
  const taken = `${JOURNAL}.undo.${process.pid}`;
  try {
    renameSync(JOURNAL, taken);
  } catch {
    return; // another start took it first
  }
  log(`undoing what an earlier run left on the host (its state was ${j.state})`);
  const left = await finish(j, undefined);
  if (left.length > 0) {
    renameSync(taken, JOURNAL);
    throw new Error(`an earlier run's changes could not all be undone: ${left.join('; ')}`);
  }
  rmSync(taken, { force: true });
}

/** containerd's own client, on the node's containerd, in the namespace the kubelet's containers live in. */
function ctr(state: string, args: readonly string[]): Promise<string> {
  return run('ctr', ['--address', containerdSocket(state), '--namespace', 'k8s.io', ...args], { timeoutMs: 300_000 });
}

/** The shims containerd started for this node's Pods: they outlive containerd by design. */
function shimPids(socket: string): number[] {
  const pids: number[] = [];
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const args = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      if (args[0]?.endsWith('containerd-shim-runc-v2') && args.includes(socket)) pids.push(Number(p));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}
