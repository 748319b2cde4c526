// A Kubernetes cluster with one real node, for the tests that run the controller as users do: as
// a Pod from its image and chart. The control plane is the sandbox's (etcd, kube-apiserver, a
// kube-controller-manager with the workload controllers), authorising the node as a node; the node
// is a kubelet on a containerd of its own with the bridge CNI plugin, plus kube-scheduler and
// kube-proxy in iptables mode. Everything listens on an address the cluster adds to a dummy link
// (a bridge without ports) of its own, so Pods reach the API server and sandbox clusters started on that address, and no
// traffic leaves the machine. Every host change is recorded first and undone at stop, even when
// a step failed; `leftovers()` is the check that nothing stayed.
import { randomBytes } from 'node:crypto';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClusterConfig, RestClient } from '../../../src/kube/index.ts';
import { apiServerComponent } from '../../../src/sandbox/apiserver.ts';
import { controllerManagerComponent } from '../../../src/sandbox/controller-manager.ts';
import { writeCredentials } from '../../../src/sandbox/credentials.ts';
import { Etcd } from '../../../src/sandbox/etcd.ts';
import { Component, SandboxCluster, tokenKubeconfig, toolPath } from '../../../src/sandbox/index.ts';
import { freePort } from '../../../src/sandbox/net.ts';
import { attempt, run } from './exec.ts';
import { HostRecord } from './host.ts';
import { buildImages, type Images } from './images.ts';

type Log = (message: string) => void;

export interface AuditEvent {
  readonly verb: string;
  readonly requestURI: string;
  readonly stageTimestamp: string;
  readonly user?: { username?: string; extra?: Record<string, string[]> };
  readonly responseStatus?: { code?: number };
}

export interface RealNodeOptions {
  /** Cluster (and node) name. */
  readonly name?: string;
  /** Where logs go (kept after stop for a post-mortem); state lives in a temporary directory. */
  readonly logDir: string;
  readonly log?: Log;
}

const WORKLOAD_CONTROLLERS = [
  'serviceaccount-token-controller',
  'serviceaccount-controller',
  'namespace-controller',
  'garbage-collector-controller',
  'clusterrole-aggregation-controller',
  'root-ca-certificate-publisher-controller',
  'deployment-controller',
  'replicaset-controller',
  'endpoints-controller',
  'endpointslice-controller',
  'endpointslice-mirroring-controller',
  'disruption-controller',
  // Takes the node's not-ready taint off once it is Ready.
  'node-lifecycle-controller',
];

export class RealNodeCluster implements AsyncDisposable {
  readonly name: string;
  /** The address everything of this cluster listens on; start sandbox clusters on it for Pods to reach them. */
  readonly address: string;
  readonly cluster: SandboxCluster;
  readonly images: Images;
  readonly podSubnet: string;
  private readonly state: string;
  private readonly logDir: string;
  private readonly record: HostRecord;
  private readonly components: Component[];
  private readonly containerdSocket: string;
  private stopped = false;

  private constructor(init: { name: string; address: string; cluster: SandboxCluster; images: Images; podSubnet: string; state: string; logDir: string; record: HostRecord; components: Component[]; containerdSocket: string }) {
    this.name = init.name;
    this.address = init.address;
    this.cluster = init.cluster;
    this.images = init.images;
    this.podSubnet = init.podSubnet;
    this.state = init.state;
    this.logDir = init.logDir;
    this.record = init.record;
    this.components = init.components;
    this.containerdSocket = init.containerdSocket;
  }

  get kubeconfigPath(): string {
    return this.cluster.kubeconfigPath;
  }

  async admin(): Promise<RestClient> {
    return new RestClient(await ClusterConfig.fromFile(this.cluster.kubeconfigPath).connection());
  }

  /** The kubelet's component (to restart it, say). */
  component(prefix: string): Component {
    const c = this.components.find((x) => x.name.startsWith(prefix));
    if (!c) throw new Error(`no component ${prefix}`);
    return c;
  }

  /** The logs of a Pod's containers, read from the node (the API server has no kubelet client certificate). */
  podLogs(namespace: string, pod: string): string {
    const dir = join(this.state, 'pod-logs');
    if (!existsSync(dir)) return '';
    return readdirSync(dir)
      .filter((d) => d.startsWith(`${namespace}_${pod}_`))
      .flatMap((d) => readdirSync(join(dir, d)).flatMap((c) => readdirSync(join(dir, d, c)).map((f) => `--- ${c}/${f}\n${readFileSync(join(dir, d, c, f), 'utf8')}`)))
      .join('\n');
  }

  /** The OCI spec containerd gave a running container of a Pod, as containerd holds it. */
  async containerSpec(containerName: string, podName: string): Promise<Record<string, unknown>> {
    const ids = (await this.ctr(['containers', 'list', '--quiet'])).split('\n').filter(Boolean);
    for (const id of ids) {
      const info = JSON.parse(await this.ctr(['containers', 'info', id])) as { Labels?: Record<string, string>; Spec?: Record<string, unknown> };
      if (info.Labels?.['io.kubernetes.container.name'] === containerName && info.Labels['io.kubernetes.pod.name'] === podName) return info.Spec ?? {};
    }
    throw new Error(`no container ${containerName} of pod ${podName} on the node`);
  }

  /** helm against this cluster, as a user runs it; throws with its output when it fails. */
  helm(args: readonly string[]): Promise<string> {
    return run(toolPath('helm'), [...args, '--kubeconfig', this.cluster.kubeconfigPath], { timeoutMs: 300_000 });
  }

  /** The token the kubelet last wrote into a Pod's projected ServiceAccount volume. */
  podToken(podUid: string): string {
    const dir = join(this.state, 'kubelet', 'pods', podUid, 'volumes', 'kubernetes.io~projected');
    const volume = readdirSync(dir).find((v) => v.startsWith('kube-api-access-'));
    if (!volume) throw new Error(`pod ${podUid} has no kube-api-access volume`);
    return readFileSync(join(dir, volume, 'token'), 'utf8');
  }

  /**
   * The API server's audit events for one user, oldest first: what identity and which credential
   * (a token's JTI) each request came with.
   */
  auditEvents(user: string): AuditEvent[] {
    const file = join(this.state, 'audit.log');
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent)
      .filter((e) => e.user?.username === user);
  }

  ctr(args: readonly string[]): Promise<string> {
    return run('ctr', ['--address', this.containerdSocket, '--namespace', 'k8s.io', ...args]);
  }

  /**
   * Stops every process, kills what runs in the Pods, and undoes every host change. Safe to call
   * twice; what could not be undone shows in `leftovers()`.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await teardown(this.components, this.containerdSocket, this.record, this.state, this.logDir);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /** What differs on the host from before the cluster started: processes, mounts, chains, links, sysctls, cgroups. */
  async leftovers(): Promise<string[]> {
    const found = await this.record.leftovers();
    for (const c of this.components) if (c.process.running) found.push(`process ${c.name} (pid ${c.pid})`);
    for (const pid of shimPids(this.containerdSocket)) found.push(`process containerd-shim (pid ${pid})`);
    if (existsSync(this.state)) found.push(`directory ${this.state}`);
    return found;
  }

  static async start(opts: RealNodeOptions): Promise<RealNodeCluster> {
    const log = opts.log ?? (() => undefined);
    const name = opts.name ?? 'node-cluster';
    if (process.getuid?.() !== 0) throw new Error('a real node needs root: it changes iptables, cgroups, mounts and network links');
    const images = await buildImages(log);
    await undoKilledRun(log);
    const record = await HostRecord.take();
    const suffix = randomBytes(3).toString('hex');
    const state = mkdtempSync(join(tmpdir(), 'cluster-registry-node-'));
    writeFileSync(JOURNAL, JSON.stringify({ pid: process.pid, state, record }));
    mkdirSync(opts.logDir, { recursive: true });
    const components: Component[] = [];
    const containerdSocket = join(state, 'containerd', 'containerd.sock');
    try {
      const { address, podSubnet, serviceRange } = await pickNetwork();
      const link = `crn${suffix}`;
      // A bridge without ports serves as the dummy link (this kernel has no dummy driver).
      await run('ip', ['link', 'add', link, 'type', 'bridge']);
      await run('ip', ['addr', 'add', `${address}/32`, 'dev', link]);
      await run('ip', ['link', 'set', link, 'up']);

      // The control plane, as the sandbox runs it, with a node identity added to the tokens.
      const credentials = writeCredentials(state);
      // Requests of ServiceAccounts are audited (metadata only): which token each one carried.
      const auditPolicy = join(state, 'audit-policy.yaml');
      writeFileSync(
        auditPolicy,
        JSON.stringify({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', omitStages: ['RequestReceived'], rules: [{ level: 'Metadata', userGroups: ['system:serviceaccounts'] }, { level: 'None' }] }),
      );
      const kubeletToken = randomBytes(24).toString('hex');
      const proxyToken = randomBytes(24).toString('hex');
      appendFileSync(credentials.tokenFile, `${kubeletToken},system:node:${name},node-uid,system:nodes\n${proxyToken},system:kube-proxy,proxy-uid\n`);
      const etcd = await Etcd.create({ dataDir: join(state, 'etcd'), logFile: join(opts.logDir, 'etcd.log'), detached: false });
      components.push(etcd);
      await etcd.start();
      const port = await freePort();
      const apiserver = apiServerComponent({
        clusterName: name,
        port,
        address,
        etcdURL: etcd.clientURL,
        certDir: state,
        credentials,
        logFile: join(opts.logDir, 'apiserver.log'),
        detached: false,
        serviceRange,
        authorization: ['Node', 'RBAC'],
        extraArgs: ['--enable-admission-plugins=NodeRestriction', '--kubelet-preferred-address-types=InternalIP', `--audit-policy-file=${auditPolicy}`, `--audit-log-path=${join(state, 'audit.log')}`, '--audit-log-format=json', '--audit-log-mode=blocking'],
      });
      components.push(apiserver);
      log(`starting the control plane of ${name} on ${address}`);
      await apiserver.start();
      const server = `https://${address}:${port}`;
      const caPem = readFileSync(join(state, 'apiserver.crt'), 'utf8');
      const kubeconfig = tokenKubeconfig({ name, server, caPem, user: `${name}-admin`, token: credentials.adminToken });
      const kubeconfigPath = join(state, 'admin.kubeconfig');
      writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
      const kubeletKubeconfig = join(state, 'kubelet.kubeconfig');
      writeFileSync(kubeletKubeconfig, tokenKubeconfig({ name, server, caPem, user: `system:node:${name}`, token: kubeletToken }), { mode: 0o600 });
      const proxyKubeconfig = join(state, 'kube-proxy.kubeconfig');
      writeFileSync(proxyKubeconfig, tokenKubeconfig({ name, server, caPem, user: 'system:kube-proxy', token: proxyToken }), { mode: 0o600 });
      const controllerManager = controllerManagerComponent({
        clusterName: name,
        kubeconfigPath,
        saKeyFile: credentials.saKeyFile,
        rootCAFile: join(state, 'apiserver.crt'),
        logFile: join(opts.logDir, 'controller-manager.log'),
        detached: false,
        controllers: WORKLOAD_CONTROLLERS,
      });
      components.push(controllerManager);
      await controllerManager.start();
      const scheduler = new Component(
        { name: `kube-scheduler ${name}`, binary: toolPath('kube-scheduler'), args: [`--kubeconfig=${kubeconfigPath}`, '--leader-elect=false', '--secure-port=0', '--v=1'], logFile: join(opts.logDir, 'scheduler.log'), detached: false },
        undefined,
      );
      components.push(scheduler);
      await scheduler.start();

      // The node: containerd with the images, CNI, kubelet, kube-proxy.
      const containerd = containerdComponent(state, containerdSocket, images, join(opts.logDir, 'containerd.log'), link, podSubnet);
      components.push(containerd);
      log('starting containerd and importing the images');
      await containerd.start();
      for (const img of Object.values(images)) {
        await run('ctr', ['--address', containerdSocket, '--namespace', 'k8s.io', 'images', 'import', '--no-unpack=false', img.archive], { timeoutMs: 300_000 });
      }
      const kubelet = await kubeletComponent({ name, state, address, podSubnet, containerdSocket, kubeconfigPath: kubeletKubeconfig, logFile: join(opts.logDir, 'kubelet.log'), cgroupRoot: `/crn${suffix}` });
      components.push(kubelet);
      log('starting the kubelet');
      await kubelet.start();
      const proxy = await kubeProxyComponent({ name, state, address, podSubnet, kubeconfigPath: proxyKubeconfig, logFile: join(opts.logDir, 'kube-proxy.log') });
      components.push(proxy);
      await proxy.start();

      const cluster = new SandboxCluster({ name, server, caPem, kubeconfigPath, kubeconfig, apiserver, controllerManager });
      const node = new RealNodeCluster({ name, address, cluster, images, podSubnet, state, logDir: opts.logDir, record, components, containerdSocket });
      await node.waitNodeReady();
      log(`node ${name} is Ready`);
      return node;
    } catch (err) {
      await teardown(components, containerdSocket, record, state, opts.logDir);
      throw err;
    }
  }

  private async waitNodeReady(timeoutMs = 120_000): Promise<void> {
    const rest = await this.admin();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const node = await rest.json<{ status?: { conditions?: { type: string; status: string }[] } }>({ method: 'GET', path: `/api/v1/nodes/${this.name}` }).catch(() => undefined);
      if (node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
      if (Date.now() > deadline) throw new Error(`node ${this.name} not Ready after ${timeoutMs / 1000}s; see the kubelet log`);
      await sleep(500);
    }
  }
}

/**
 * A /32 in 100.64.0.0/10 for the node, and /24s in 10.128.0.0/9 for Pods and for Services, that no
 * route or address of this machine covers (the sandbox's Services use 10.0.0.0/24: kube-proxy's
 * rules for this cluster's must not catch a sandbox API server dialling its own).
 */
async function pickNetwork(): Promise<{ address: string; podSubnet: string; serviceRange: string }> {
  const used = (await run('ip', ['-4', '-o', 'route', 'show', 'table', 'all'])) + (await run('ip', ['-4', '-o', 'addr', 'show']));
  const prefix = (s: string) => s.split('.').slice(0, 2).join('.');
  const random = (n: number) => Math.floor(Math.random() * n);
  for (let i = 0; i < 50; i++) {
    const address = `100.${64 + random(64)}.${random(256)}.${1 + random(254)}`;
    const second = 128 + random(127);
    const podSubnet = `10.${second}.${random(128)}.0/24`;
    const serviceRange = `10.${second}.${128 + random(128)}.0/24`;
    if (!used.includes(`${prefix(address)}.`) && !used.includes(`${prefix(podSubnet)}.`)) return { address, podSubnet, serviceRange };
  }
  throw new Error('no free private address range for the node');
}

function containerdComponent(state: string, socket: string, images: Images, logFile: string, link: string, podSubnet: string): Component {
  const dir = join(state, 'containerd');
  const cniConf = join(state, 'cni');
  mkdirSync(cniConf, { recursive: true });
  writeFileSync(
    join(cniConf, '10-node.conflist'),
    JSON.stringify({
      cniVersion: '0.4.0',
      name: `node-${link}`,
      plugins: [
        {
          type: 'bridge',
          bridge: `${link}b`,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: podSubnet }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: join(state, 'ipam') },
        },
      ],
    }),
  );
  const config = join(state, 'containerd.toml');
  writeFileSync(
    config,
    [
      'version = 2',
      `root = "${join(dir, 'root')}"`,
      `state = "${join(dir, 'state')}"`,
      // The plugin that installs into /opt on the host is not needed.
      'disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper"]',
      '[grpc]',
      `  address = "${socket}"`,
      '[ttrpc]',
      `  address = "${socket}.ttrpc"`,
      '[plugins."io.containerd.grpc.v1.cri"]',
      `  sandbox_image = "${images.pause.ref}"`,
      // The VM lacks CAP_SYS_RESOURCE: lowering a sandbox's oom_score_adj below ours fails.
      '  restrict_oom_score_adj = true',
      '  [plugins."io.containerd.grpc.v1.cri".containerd]',
      '    snapshotter = "overlayfs"',
      '    default_runtime_name = "runc"',
      '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
      '      runtime_type = "io.containerd.runc.v2"',
      '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
      '        SystemdCgroup = false',
      '  [plugins."io.containerd.grpc.v1.cri".cni]',
      '    bin_dir = "/usr/lib/cni"',
      `    conf_dir = "${cniConf}"`,
      '',
    ].join('\n'),
  );
  return new Component({ name: 'containerd', binary: 'containerd', args: ['--config', config], logFile, detached: false }, undefined);
}

interface NodeSettings {
  readonly name: string;
  readonly state: string;
  readonly address: string;
  readonly podSubnet: string;
  readonly kubeconfigPath: string;
  readonly logFile: string;
}

async function kubeletComponent(s: NodeSettings & { containerdSocket: string; cgroupRoot: string }): Promise<Component> {
  const [port, healthz] = [await freePort(), await freePort()];
  // The cgroup the node's Pods live under, made in every hierarchy (the kubelet requires it exists);
  // a cpuset needs its CPUs and memory nodes before anything can join it.
  for (const ctl of readdirSync('/sys/fs/cgroup').filter((c) => c !== 'unified')) {
    const dir = join('/sys/fs/cgroup', ctl, s.cgroupRoot);
    mkdirSync(dir, { recursive: true });
    if (ctl === 'cpuset') {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(dir, f), readFileSync(join('/sys/fs/cgroup', ctl, f), 'utf8'));
    }
  }
  const config = join(s.state, 'kubelet.yaml');
  writeFileSync(
    config,
    JSON.stringify({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: s.address,
      port,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: healthz,
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true } },
      authorization: { mode: 'Webhook' },
      cgroupDriver: 'cgroupfs',
      cgroupRoot: s.cgroupRoot,
      failCgroupV1: false,
      failSwapOn: false,
      podCIDR: s.podSubnet,
      resolvConf: '/etc/resolv.conf',
      containerRuntimeEndpoint: `unix://${s.containerdSocket}`,
      podLogsDir: join(s.state, 'pod-logs'),
      // Configmaps, Secrets and projected tokens are refreshed at this period.
      syncFrequency: '5s',
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      serializeImagePulls: false,
      protectKernelDefaults: false,
    }),
  );
  return new Component(
    {
      name: `kubelet ${s.name}`,
      binary: toolPath('kubelet'),
      args: [`--config=${config}`, `--kubeconfig=${s.kubeconfigPath}`, `--root-dir=${join(s.state, 'kubelet')}`, `--hostname-override=${s.name}`, `--node-ip=${s.address}`, '--v=1'],
      logFile: s.logFile,
      detached: false,
    },
    `http://127.0.0.1:${healthz}/healthz`,
  );
}

async function kubeProxyComponent(s: NodeSettings): Promise<Component> {
  const [healthz, metrics] = [await freePort(), await freePort()];
  const config = join(s.state, 'kube-proxy.yaml');
  writeFileSync(
    config,
    JSON.stringify({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig: s.kubeconfigPath },
      mode: 'iptables',
      hostnameOverride: s.name,
      bindAddress: s.address,
      clusterCIDR: s.podSubnet,
      healthzBindAddress: `127.0.0.1:${healthz}`,
      metricsBindAddress: `127.0.0.1:${metrics}`,
      nodePortAddresses: [`${s.address}/32`],
      // The host's conntrack settings are left as they are.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      iptables: { localhostNodePorts: false, syncPeriod: '30s', minSyncPeriod: '0s' },
    }),
  );
  return new Component(
    { name: `kube-proxy ${s.name}`, binary: toolPath('kube-proxy'), args: [`--config=${config}`, '--v=1'], logFile: s.logFile, detached: false },
    `http://127.0.0.1:${healthz}/healthz`,
  );
}

/** The shims containerd started for this node's Pods: they outlive containerd by design. */
function shimPids(socket: string): number[] {
  const pids: number[] = [];
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (cmd.includes('containerd-shim') && cmd.includes(socket)) pids.push(Number(p));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/**
 * Where a running node keeps its process, state directory and host record until it has stopped:
 * one per machine (host state is the machine's), on tmpfs (a reboot undoes the changes too).
 */
const JOURNAL = '/run/cluster-registry-real-node.json';

/**
 * One real node at a time on a machine. A run killed before its stop (its processes died with it,
 * but not its Pods, shims, mounts, chains, links or sysctls) left its journal: undo what it changed
 * before recording the host anew.
 */
async function undoKilledRun(log: Log): Promise<void> {
  if (!existsSync(JOURNAL)) return;
  const { pid, state, record } = JSON.parse(readFileSync(JOURNAL, 'utf8')) as { pid: number; state: string; record: unknown };
  if (pid !== process.pid && existsSync(`/proc/${pid}`)) throw new Error(`another real node runs on this machine (process ${pid}); one at a time`);
  log(`undoing what a killed run changed on the host (its state was ${state})`);
  await teardown([], join(state, 'containerd', 'containerd.sock'), HostRecord.fromJSON(JSON.stringify(record)), state, undefined);
}

async function teardown(components: readonly Component[], socket: string, record: HostRecord, state: string, logDir: string | undefined): Promise<void> {
  // The node first (no Pod restarted meanwhile), then the Pods' processes, then the control plane.
  for (const c of [...components].reverse()) await c.stop().catch(() => undefined);
  // The Pods' logs stay with the others, for a post-mortem.
  if (logDir && existsSync(join(state, 'pod-logs'))) cpSync(join(state, 'pod-logs'), join(logDir, 'pods'), { recursive: true, dereference: true });
  for (const pid of shimPids(socket)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await record.undo();
  // A shim killed just now may still hold a mount for a moment.
  for (let i = 0; i < 20 && (await attempt('rm', ['-rf', '--one-file-system', state])).code !== 0; i++) await sleep(250);
  rmSync(JOURNAL, { force: true });
}
