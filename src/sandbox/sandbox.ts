// Real local clusters on loopback: one etcd shared by N kube-apiservers (distinct etcd
// prefixes), each with a kube-controller-manager running the cheap controllers.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { apiServerComponent } from './apiserver.ts';
import type { Component } from './component.ts';
import { controllerManagerComponent } from './controller-manager.ts';
import { writeCredentials } from './credentials.ts';
import { Etcd } from './etcd.ts';
import { tokenKubeconfig } from './kubeconfig.ts';
import { freePort } from './net.ts';
import { removePaths, writeState, type SandboxState } from './state.ts';
import { TOOLS_BIN_DIR } from './tools.ts';

export interface SandboxOptions {
  /** Number of clusters; ignored when `names` is given. */
  readonly clusters?: number;
  /** Cluster names (default cluster1..clusterN). */
  readonly names?: readonly string[];
  /** Where kubeconfigs, logs and state go; a temporary directory (removed on stop) when omitted. */
  readonly dir?: string;
  /** Run a kube-controller-manager per cluster (default true). */
  readonly controllerManager?: boolean;
  /** Processes outlive this one (the CLI's `sandbox up`); stop them with `sandbox down`. */
  readonly detached?: boolean;
  /** Progress messages. */
  readonly log?: (message: string) => void;
  /** The address every apiserver serves on (default 127.0.0.1): another local one lets Pods of a real node reach them. */
  readonly address?: string;
  /** Extra kube-apiserver flags for every cluster (e.g. feature gates). */
  readonly apiserverArgs?: readonly string[];
}

export class SandboxCluster {
  readonly name: string;
  readonly server: string;
  /** The CA the apiserver's serving certificate chains to. */
  readonly caPem: string;
  readonly kubeconfigPath: string;
  readonly kubeconfig: string;
  readonly apiserver: Component;
  readonly controllerManager: Component | undefined;
  /** Processes started on top of the cluster (e.g. the registry controller); stopped first. */
  readonly extras: Component[] = [];

  constructor(init: {
    name: string;
    server: string;
    caPem: string;
    kubeconfigPath: string;
    kubeconfig: string;
    apiserver: Component;
    controllerManager: Component | undefined;
  }) {
    this.name = init.name;
    this.server = init.server;
    this.caPem = init.caPem;
    this.kubeconfigPath = init.kubeconfigPath;
    this.kubeconfig = init.kubeconfig;
    this.apiserver = init.apiserver;
    this.controllerManager = init.controllerManager;
  }
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

// Attached sandboxes whose temporary state (etcd data on tmpfs, certificates) must not outlive
// this process even when a test dies before its cleanup: their processes die with us
// (process.ts), their files go here.
const attached = new Set<Sandbox>();
let exitHookInstalled = false;
function removeOnExit(sandbox: Sandbox): void {
  attached.add(sandbox);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const sb of attached) sb.removeFiles();
  });
}

export function clusterNames(opts: Pick<SandboxOptions, 'clusters' | 'names'>): string[] {
  const names = opts.names?.length ? [...opts.names] : Array.from({ length: opts.clusters ?? 1 }, (_, i) => `cluster${i + 1}`);
  if (names.length === 0) throw new Error('a sandbox needs at least one cluster');
  for (const n of names) {
    if (!NAME.test(n) || n.length > 63) throw new Error(`invalid cluster name "${n}": use lower-case letters, digits and '-'`);
  }
  if (new Set(names).size !== names.length) throw new Error(`cluster names must be unique: ${names.join(',')}`);
  return names;
}

export class Sandbox implements AsyncDisposable {
  readonly dir: string;
  readonly etcd: Etcd;
  readonly clusters: readonly SandboxCluster[];
  /** Paths this sandbox created and removes when it stops. */
  private readonly owned: readonly string[];
  private readonly detached: boolean;
  private stopped = false;

  constructor(dir: string, etcd: Etcd, clusters: readonly SandboxCluster[], owned: readonly string[], detached: boolean) {
    this.dir = dir;
    this.etcd = etcd;
    this.clusters = clusters;
    this.owned = owned;
    this.detached = detached;
  }

  /** Removes the sandbox's temporary files (not its logs, unless it owns the whole directory). */
  removeFiles(): void {
    removePaths(this.owned);
  }

  /** Records the processes in <dir>/sandbox.json so `sandbox status/down` find them (detached sandboxes only). */
  persist(): void {
    if (this.detached) writeState(this.dir, stateOf(this, this.owned));
  }

  cluster(name: string): SandboxCluster {
    const c = this.clusters.find((x) => x.name === name);
    if (!c) throw new Error(`no sandbox cluster named ${name} (have ${this.clusters.map((x) => x.name).join(', ')})`);
    return c;
  }

  /** Stops every process and removes the sandbox's temporary state. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all(this.clusters.flatMap((c) => c.extras.map((x) => x.stop())));
    await Promise.all(this.clusters.flatMap((c) => (c.controllerManager ? [c.controllerManager.stop()] : [])));
    await Promise.all(this.clusters.map((c) => c.apiserver.stop()));
    await this.etcd.stop();
    this.removeFiles();
    attached.delete(this);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

/** Where etcd keeps its data: tmpfs when the machine has one, since the data is disposable. */
function etcdDataDir(dir: string): string {
  try {
    if (statSync('/dev/shm').isDirectory()) return mkdtempSync('/dev/shm/cluster-registry-etcd-');
  } catch {
    // no tmpfs: fall through to the sandbox dir
  }
  const d = join(dir, 'etcd-data');
  mkdirSync(d, { recursive: true });
  return d;
}

/**
 * Starts the clusters and returns once every apiserver answers /readyz. If anything fails
 * half-way, everything already started is stopped before the error is thrown.
 */
export async function startSandbox(opts: SandboxOptions): Promise<Sandbox> {
  const log = opts.log ?? (() => undefined);
  const names = clusterNames(opts);
  const detached = opts.detached ?? false;
  const withKcm = opts.controllerManager ?? true;
  const dir = resolve(opts.dir ?? mkdtempSync(join(tmpdir(), 'cluster-registry-sandbox-')));
  if (existsSync(join(dir, 'sandbox.json'))) {
    throw new Error(`${dir} already holds a sandbox; run 'cluster-registry sandbox down --dir ${dir}' first`);
  }
  const logs = join(dir, 'logs');
  mkdirSync(logs, { recursive: true });
  const dataDir = etcdDataDir(dir);
  // Everything the sandbox writes but its logs, which stay for a post-mortem (a temporary dir goes whole).
  const owned = opts.dir
    ? [dataDir, join(dir, 'sandbox.json'), join(dir, 'env.sh'), ...names.flatMap((n) => [join(dir, n), join(dir, `${n}.kubeconfig`)])]
    : [dataDir, dir];
  const started: Component[] = [];

  try {
    const etcd = await Etcd.create({ dataDir, logFile: join(logs, 'etcd.log'), detached });
    log(`starting etcd (${etcd.clientURL}, data in ${dataDir})`);
    await etcd.start();
    started.push(etcd);

    const clusters = await Promise.all(
      names.map(async (name) => {
        const clusterDir = join(dir, name);
        mkdirSync(clusterDir, { recursive: true });
        const credentials = writeCredentials(clusterDir);
        const port = await freePort();
        const address = opts.address ?? '127.0.0.1';
        const server = `https://${address}:${port}`;
        const apiserver = apiServerComponent({
          clusterName: name,
          port,
          address,
          etcdURL: etcd.clientURL,
          certDir: clusterDir,
          credentials,
          logFile: join(logs, `${name}-apiserver.log`),
          detached,
          extraArgs: opts.apiserverArgs ?? [],
        });
        log(`starting kube-apiserver ${name} (${server})`);
        started.push(apiserver);
        await apiserver.start();
        const caFile = join(clusterDir, 'apiserver.crt');
        const caPem = readFileSync(caFile, 'utf8');
        const kubeconfig = tokenKubeconfig({ name, server, caPem, user: `${name}-admin`, token: credentials.adminToken });
        const kubeconfigPath = join(dir, `${name}.kubeconfig`);
        writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
        let controllerManager: Component | undefined;
        if (withKcm) {
          controllerManager = controllerManagerComponent({
            clusterName: name,
            kubeconfigPath,
            saKeyFile: credentials.saKeyFile,
            rootCAFile: caFile,
            logFile: join(logs, `${name}-controller-manager.log`),
            detached,
          });
          started.push(controllerManager);
          await controllerManager.start();
        }
        log(`cluster ${name} ready`);
        return new SandboxCluster({ name, server, caPem, kubeconfigPath, kubeconfig, apiserver, controllerManager });
      }),
    );

    writeFileSync(join(dir, 'env.sh'), envScript(dir, names));
    const sandbox = new Sandbox(dir, etcd, clusters, owned, detached);
    if (!detached) removeOnExit(sandbox);
    sandbox.persist();
    return sandbox;
  } catch (err) {
    await Promise.all(started.map((c) => c.kill()));
    removePaths(owned);
    throw err;
  }
}

function envScript(dir: string, names: readonly string[]): string {
  const kubeconfigs = names.map((n) => join(dir, `${n}.kubeconfig`)).join(':');
  return [
    '# Source this file: puts the sandbox-built kubectl and helm on PATH and every cluster in KUBECONFIG',
    `# (one context per cluster: kubectl --context ${names[0]} get ns).`,
    `export PATH="${TOOLS_BIN_DIR}:$PATH"`,
    `export KUBECONFIG="${kubeconfigs}"`,
    '',
  ].join('\n');
}

function stateOf(sandbox: Sandbox, ownedPaths: readonly string[]): SandboxState {
  const proc = (c: Component) => ({ name: c.name, pid: c.pid ?? -1, binary: c.process.spec.binary, logFile: c.process.spec.logFile, healthUrl: c.healthUrl });
  return {
    version: 1,
    createdAt: new Date().toISOString(),
    ownedPaths: [...ownedPaths],
    etcd: proc(sandbox.etcd),
    clusters: sandbox.clusters.map((c) => ({
      name: c.name,
      server: c.server,
      kubeconfigPath: c.kubeconfigPath,
      processes: [proc(c.apiserver), ...(c.controllerManager ? [proc(c.controllerManager)] : []), ...c.extras.map(proc)],
    })),
  };
}
