// A sandbox running the product: each cluster gets the registry installed (CRDs, namespace, RBAC)
// and one controller process, as a Helm install with localCluster.name would give it; optionally
// every pair of clusters is joined.
import { existsSync, writeFileSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClusterConfig, RestClient } from '../kube/index.ts';
import { freePort } from '../sandbox/net.ts';
import { Component, ComponentError, startSandbox, tokenKubeconfig, type Sandbox, type SandboxCluster, type SandboxOptions } from '../sandbox/index.ts';
import { API_GROUP, API_VERSION, RESOURCES, WELL_KNOWN } from '../core/api/keys.ts';
import type { KubeObject } from '../core/api/types.ts';
import { applyObjects, installRegistry } from '../registry/install.ts';
import { join } from '../ops/join.ts';

export const SANDBOX_NAMESPACE = 'cluster-registry';
export const CONTROLLER_SERVICE_ACCOUNT = 'cluster-registry-controller';
export const WEBHOOK_CONFIGURATION = 'cluster-registry-controller-cluster-validator-webhook';

export interface GroupOptions extends SandboxOptions {
  /** Run a controller per cluster (default true). */
  readonly controllers?: boolean;
  /** Join every pair of clusters once the controllers run. */
  readonly join?: boolean;
  /** Extra controller flags, per cluster. */
  readonly controllerArgs?: (cluster: string) => readonly string[];
  /** Extra flags of the controller's Node, per cluster (a benchmark's heap snapshots). */
  readonly nodeFlags?: (cluster: string) => readonly string[];
  /** Members running upstream's Go controller read the clusters (installs deploy/compat). */
  readonly upstreamPeers?: boolean;
  /** Run the controllers from the build in dist/ even when this module runs from sources (benchmarks). */
  readonly built?: boolean;
}

/** The CLI entry next to this module: the .ts sources under test, the compiled .js when installed. */
const CLI_ENTRY = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../cli/main.ts' : '../cli/main.js', import.meta.url));
/** The compiled CLI (`npm run build`), as the product ships: sources cost their type stripping in memory. */
const BUILT_CLI_ENTRY = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/**
 * How the controller's Node runs in the sandbox (demo, tests, benchmarks), as the image runs it.
 * V8 grows the young generation with the allocation rate, up to 128 MiB here, and keeps it: capped
 * at 16 MiB semi-spaces, a controller syncing thousands of objects holds about a third less memory
 * for the same work. Smaller still trades CPU for memory (docs/operations.md has the figures).
 */
export const CONTROLLER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16'];

/** The settings of jemalloc the image runs the controller with (its MALLOC_CONF). */
export const JEMALLOC_CONF = 'background_thread:true,dirty_decay_ms:5000,muzzy_decay_ms:0';
/** Where Debian's libjemalloc2 puts the library, by architecture; the image links it from /usr/local/lib. */
const JEMALLOC_PATHS = ['/usr/local/lib/libjemalloc.so.2', '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2', '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2'];

/**
 * The environment that runs the controller's Node on the allocator the image preloads, jemalloc,
 * where this machine has it (`make test`, `chaos`, `fuzz` and `bench` install Debian's); undefined where it
 * does not (a laptop running the demo), and Node then runs on the C library's malloc.
 */
export function controllerAllocatorEnv(): Readonly<Record<string, string>> | undefined {
  const lib = JEMALLOC_PATHS.find((p) => existsSync(p));
  return lib ? { LD_PRELOAD: lib, MALLOC_CONF: JEMALLOC_CONF } : undefined;
}

/** A client of the cluster a kubeconfig file names. */
export async function kubeconfigClient(path: string): Promise<RestClient> {
  return new RestClient(await ClusterConfig.fromFile(path).connection());
}

export async function adminClient(cluster: SandboxCluster): Promise<RestClient> {
  return kubeconfigClient(cluster.kubeconfigPath);
}

/** Path of the kubeconfig a sandbox controller runs with (its own ServiceAccount's token inline). */
export function controllerKubeconfigPath(sandbox: Sandbox, cluster: string): string {
  return joinPath(sandbox.dir, cluster, `${cluster}-controller.kubeconfig`);
}

/** A kubeconfig for the controller's own ServiceAccount, so the sandbox runs it with the RBAC it ships with. */
async function controllerKubeconfig(cluster: SandboxCluster, rest: RestClient, path: string): Promise<string> {
  const tr = await rest.json<{ status?: { token?: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${SANDBOX_NAMESPACE}/serviceaccounts/${CONTROLLER_SERVICE_ACCOUNT}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 7 * 86_400 } },
  });
  const token = tr.status?.token ?? '';
  writeFileSync(path, tokenKubeconfig({ name: cluster.name, server: cluster.server, caPem: cluster.caPem, user: CONTROLLER_SERVICE_ACCOUNT, token }), { mode: 0o600 });
  return path;
}

/**
 * The webhook registered by URL (no Service routing on loopback), starting as Ignore: the
 * controller's leader switches it to Fail once it serves.
 */
function webhookConfiguration(port: number): KubeObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: WEBHOOK_CONFIGURATION },
    webhooks: [
      {
        name: WELL_KNOWN.webhookEntryName,
        clientConfig: { url: `https://127.0.0.1:${port}${WELL_KNOWN.webhookPath}` },
        rules: [{ apiGroups: [API_GROUP], apiVersions: [API_VERSION], operations: ['CREATE', 'UPDATE'], resources: [RESOURCES.clusters], scope: '*' }],
        failurePolicy: 'Ignore',
        matchPolicy: 'Equivalent',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 10,
      },
    ],
  };
}

/** Installs the registry in one sandbox cluster and starts our controller there (one of its extras). */
export async function startController(sandbox: Sandbox, cluster: SandboxCluster, opts: Pick<GroupOptions, 'controllerArgs' | 'nodeFlags' | 'detached' | 'upstreamPeers' | 'built'> = {}): Promise<void> {
  const rest = await adminClient(cluster);
  try {
    await installRegistry(rest, undefined, { upstreamPeers: opts.upstreamPeers ?? false });
    const kubeconfig = await controllerKubeconfig(cluster, rest, controllerKubeconfigPath(sandbox, cluster.name));
    // A port found free may be taken by another process before the controller listens on it: then
    // the controller starts again on other ports.
    for (let attempt = 1; ; attempt++) {
      const [metricsPort, healthPort, webhookPort] = [await freePort(), await freePort(), await freePort()];
      await applyObjects(rest, [webhookConfiguration(webhookPort)]);
      const controller = new Component(
        {
          name: `cluster-registry-controller ${cluster.name}`,
          binary: process.execPath,
          args: [
            ...CONTROLLER_NODE_FLAGS,
            ...(opts.nodeFlags?.(cluster.name) ?? []),
            opts.built ? BUILT_CLI_ENTRY : CLI_ENTRY,
            'controller',
            `--kubeconfig=${kubeconfig}`,
            `--provision-local-cluster=${cluster.name}`,
            `--namespace=${SANDBOX_NAMESPACE}`,
            `--metrics-addr=127.0.0.1:${metricsPort}`,
            `--health-addr=127.0.0.1:${healthPort}`,
            `--cluster-validator-webhook-name=${WEBHOOK_CONFIGURATION}`,
            `--cluster-validator-webhook-port=${webhookPort}`,
            ...(opts.controllerArgs?.(cluster.name) ?? []),
          ],
          logFile: joinPath(sandbox.dir, 'logs', `${cluster.name}-controller.log`),
          env: controllerAllocatorEnv(),
          detached: opts.detached ?? false,
        },
        `http://127.0.0.1:${healthPort}/readyz`,
      );
      cluster.extras.push(controller);
      try {
        await controller.start();
        return;
      } catch (err) {
        if (attempt >= PORT_ATTEMPTS || !(err instanceof ComponentError) || !/EADDRINUSE/.test(err.message)) throw err;
        cluster.extras.splice(cluster.extras.indexOf(controller), 1);
      }
    }
  } finally {
    rest.close();
  }
}

const PORT_ATTEMPTS = 3;

/** Starts the sandbox, the controllers and (optionally) joins the clusters; everything stops if any step fails. */
export async function startGroup(opts: GroupOptions): Promise<Sandbox> {
  const log = opts.log ?? (() => undefined);
  const sandbox = await startSandbox(opts);
  try {
    if (opts.controllers ?? true) {
      await Promise.all(
        sandbox.clusters.map(async (c) => {
          log(`installing the registry and starting its controller in ${c.name}`);
          await startController(sandbox, c, opts);
        }),
      );
      sandbox.persist();
    }
    if (opts.join) {
      const clients = new Map(await Promise.all(sandbox.clusters.map(async (c) => [c.name, await adminClient(c)] as const)));
      try {
        for (let i = 0; i < sandbox.clusters.length; i++) {
          for (let j = i + 1; j < sandbox.clusters.length; j++) {
            const [a, b] = [sandbox.clusters[i], sandbox.clusters[j]].map((c) => ({ rest: clients.get(c?.name ?? '') as RestClient, label: c?.name ?? '' }));
            if (!a || !b) continue;
            await join(a, b, { namespace: SANDBOX_NAMESPACE, timeoutMs: 120_000, progress: (m) => log(`join: ${m}`) });
          }
        }
      } finally {
        for (const c of clients.values()) c.close();
      }
    }
    return sandbox;
  } catch (err) {
    await sandbox.stop();
    throw err;
  }
}
