// Looking at a sandbox group the way an operator would: Cluster status, the Events recorded on
// Clusters, the controllers' metrics and logs; and the objects the registry tests create.
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CLUSTER_SECRET, WELL_KNOWN } from '../../src/core/api/keys.ts';
import { CLUSTERS, SECRETS, type Secret } from '../../src/core/api/resources.ts';
import type { Cluster, ClusterCondition, ClusterSpec } from '../../src/core/api/types.ts';
import { isNotFound, type KubeObject, type RestClient } from '../../src/kube/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { SANDBOX_NAMESPACE, WEBHOOK_CONFIGURATION } from '../../src/testbed/group.ts';
import { eventually } from './eventually.ts';

// Written by the sandbox's group, which names its path.
export { controllerKubeconfigPath } from '../../src/testbed/group.ts';

export const CLUSTER_API_VERSION = 'clusterregistry.k8s.cisco.com/v1alpha1';
const EVENTS = { group: '', version: 'v1', resource: 'events' };
export const WEBHOOKS = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' };

export type WebhookConfiguration = KubeObject & { webhooks?: { failurePolicy?: string; clientConfig?: { caBundle?: string } }[] };

export const conditionOf = (c: Cluster | undefined, type: string): ClusterCondition | undefined => c?.status?.conditions?.find((x) => x.type === type);
export const readyOf = (c: Cluster | undefined): ClusterCondition | undefined => conditionOf(c, 'Ready');

export interface ClusterEvent extends KubeObject {
  involvedObject?: { kind?: string; name?: string };
  type?: string;
  reason?: string;
  message?: string;
}

/** Every Event in the cluster (cluster-scoped objects' Events land in default). */
export async function allEvents(rest: RestClient): Promise<ClusterEvent[]> {
  return (await rest.listAll<ClusterEvent>(EVENTS)).items;
}

/** Waits for a Warning Event on Cluster `name` whose message matches; returns it. */
export function warningEventFor(rest: RestClient, name: string, message: RegExp = /./): Promise<ClusterEvent> {
  return eventually(`a Warning Event on Cluster ${name} matching ${String(message)}`, async () =>
    (await allEvents(rest)).find((e) => e.involvedObject?.kind === 'Cluster' && e.involvedObject.name === name && e.type === 'Warning' && message.test(e.message ?? '')),
  );
}

/** Waits until Cluster `name` satisfies `check`; returns it. */
export function clusterWhen(rest: RestClient, name: string, what: string, check: (c: Cluster) => boolean, timeoutMs?: number): Promise<Cluster> {
  return eventually(
    `Cluster ${name} ${what}`,
    async () => {
      const c = await rest.get<Cluster>(CLUSTERS, undefined, name);
      return check(c) ? c : undefined;
    },
    timeoutMs,
  );
}

/** The controller process of a sandbox cluster (startGroup runs one per cluster). */
function controllerOf(sandbox: Sandbox, cluster: string) {
  const controller = sandbox.cluster(cluster).extras[0];
  if (!controller) throw new Error(`${cluster} runs no controller`);
  return controller;
}

/** The /metrics text of a cluster's controller. */
export async function controllerMetrics(sandbox: Sandbox, cluster: string): Promise<string> {
  const addr = controllerOf(sandbox, cluster).process.spec.args.find((a) => a.startsWith('--metrics-addr='))?.split('=')[1];
  return (await fetch(`http://${addr ?? ''}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
}

/** Every series of metric `name` that a cluster's controller exports (ours or upstream's: both serve Prometheus text). */
export async function controllerSeries(sandbox: Sandbox, cluster: string, name: string): Promise<{ labels: Record<string, string>; value: number }[]> {
  return seriesIn(await controllerMetrics(sandbox, cluster), name);
}

/** Every series of metric `name` in a /metrics text (to read several from one fetch). */
export function seriesIn(metrics: string, name: string): { labels: Record<string, string>; value: number }[] {
  const series: { labels: Record<string, string>; value: number }[] = [];
  for (const line of metrics.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (m?.[1] === name) series.push({ labels: Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]])), value: Number(m[3]) });
  }
  return series;
}

/** A metric's value as a cluster's controller exports it (summed over series matching `labels`). */
export async function controllerMetric(sandbox: Sandbox, cluster: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const matching = (await controllerSeries(sandbox, cluster, name)).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.reduce((sum, s) => sum + s.value, 0);
}

/** Whether the controller runs an informer for the peer `peer` (its gauges list only live informers). */
export function hasPeerInformer(metrics: string, peer: string): boolean {
  return new RegExp(`^informer_objects\\{[^}]*cluster="${peer}"`, 'm').test(metrics);
}

/** The text of a cluster's controller log. */
export function controllerLog(sandbox: Sandbox, cluster: string): string {
  return readFileSync(join(sandbox.dir, 'logs', `${cluster}-controller.log`), 'utf8');
}

/** The text of every controller log of the sandbox, by file name. */
export function controllerLogs(sandbox: Sandbox): Map<string, string> {
  const dir = join(sandbox.dir, 'logs');
  return new Map(readdirSync(dir).filter((f) => f.endsWith('-controller.log')).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

/**
 * Waits until the API server calls the Cluster validating webhook and honours its answer: the
 * leader has published its CA with failurePolicy Fail (before that a call may fail and be
 * ignored). Returns the configuration.
 */
export function webhookEnforced(rest: RestClient): Promise<WebhookConfiguration> {
  return eventually('the Cluster webhook to be enforced', async () => {
    const w = await rest.get<WebhookConfiguration>(WEBHOOKS, undefined, WEBHOOK_CONFIGURATION);
    return w.webhooks?.length && w.webhooks.every((x) => x.failurePolicy === 'Fail' && x.clientConfig?.caBundle) ? w : undefined;
  });
}

/** A kubeconfig with one cluster entry, one user entry and a current context naming both. */
export function kubeconfigText(cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'ctx',
  });
}

/** A credentials Secret in the controller namespace (or `namespace`); `data` values are text. */
export function credentialsSecret(name: string, data: Record<string, string>, opts: { type?: string; namespace?: string } = {}): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: opts.namespace ?? SANDBOX_NAMESPACE },
    type: opts.type ?? CLUSTER_SECRET.type,
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

/** A peer Cluster; `secret` names its credentials Secret in the controller namespace. */
export function peerCluster(name: string, spec: Partial<ClusterSpec> & { clusterID: string }, secret?: string): Cluster {
  return {
    apiVersion: CLUSTER_API_VERSION,
    kind: 'Cluster',
    metadata: { name },
    spec: { ...(secret ? { authInfo: { secretRef: { name: secret, namespace: SANDBOX_NAMESPACE } } } : {}), ...spec },
  };
}

/** Deletes what a test created, ignoring what is already gone. */
export async function deleteAll(rest: RestClient, objects: readonly { kind: 'Cluster' | 'Secret'; name: string; namespace?: string }[]): Promise<void> {
  for (const o of objects) {
    try {
      if (o.kind === 'Cluster') await rest.delete(CLUSTERS, undefined, o.name);
      else await rest.delete(SECRETS, o.namespace ?? SANDBOX_NAMESPACE, o.name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** A valid review of a peer Cluster's creation, as the API server would send it, straight to a webhook port through a verifying HTTPS client. */
export function admitDirectly(port: number, ca: string, uid: string): Promise<{ status: number; body: string }> {
  const review = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid, kind: { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', kind: 'Cluster' }, operation: 'CREATE', object: { metadata: { name: 'a-peer' }, spec: { clusterID: 'a-peer-id' } } },
  });
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, method: 'POST', path: WELL_KNOWN.webhookPath, ca, agent: false, headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(review);
  });
}
