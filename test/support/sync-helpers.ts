// Shared by the sync integration tests: a group of real clusters each running our controller,
// joined as a person following the quickstart would (each new member swapped with one existing
// member only), and small readers of what the clusters hold.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Cluster, KubeObject, ResourceSyncRule } from '../../src/core/api/types.ts';
import { CLUSTERS, CUSTOM_RESOURCE_DEFINITIONS, NAMESPACES, SECRETS } from '../../src/core/api/resources.ts';
import { isAlreadyExists, isNotFound, type ResourceRef, type RestClient } from '../../src/kube/index.ts';
import { join } from '../../src/ops/join.ts';
import type { Sandbox, SandboxCluster } from '../../src/sandbox/index.ts';
import { adminClient, SANDBOX_NAMESPACE, startGroup } from '../../src/testbed/group.ts';
import { eventually } from './eventually.ts';
import { kubectl, kubectlOk } from './kubectl.ts';
import { stopChecked, type CheckExceptions } from './security-checks.ts';

export { RESOURCE_SYNC_RULES as RULES, CLUSTER_FEATURES as FEATURES, CUSTOM_RESOURCE_DEFINITIONS as CRDS } from '../../src/core/api/resources.ts';
export const CLUSTER_ROLES: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' };
export const OWNER = 'cluster-registry.k8s.cisco.com/resource-owner-cluster-id';
export const SYNC_DISABLED = 'cluster-registry.k8s.cisco.com/resource-sync-disabled';

export interface SyncGroup {
  readonly sandbox: Sandbox;
  readonly names: readonly string[];
  client(name: string): RestClient;
  /** Stops the group after the security checks, with what they should allow (a spoke's reports to its hub). */
  stop(exceptions?: CheckExceptions): Promise<void>;
}

/**
 * The upstream quickstart's swap, by hand with kubectl: `kubectl get cluster A -o yaml | kubectl
 * apply -f -` into B, the same for A's Secret, and both again the other way. Upstream's
 * controller may see the Secret arrive before the Cluster is in its cache, and then never looks
 * at that Cluster again, so where it runs the Secret goes first.
 */
export async function kubectlSwap(a: SandboxCluster, b: SandboxCluster, order: 'cluster-first' | 'secret-first' = 'cluster-first', timeoutMs = 60_000): Promise<void> {
  for (const [from, to] of [[a, b], [b, a]] as const) {
    const cluster = ['get', 'cluster', from.name, '-o', 'yaml'];
    const secret = ['get', 'secret', '-n', SANDBOX_NAMESPACE, from.name, '-o', 'yaml'];
    for (const args of order === 'cluster-first' ? [cluster, secret] : [secret, cluster]) {
      const yaml = await eventually(`${from.name}'s ${args[1]} to exist`, () => kubectl(from.kubeconfigPath, args).then((r) => (r.code === 0 ? r.stdout : undefined)), timeoutMs);
      await kubectlOk(to.kubeconfigPath, ['apply', '-f', '-'], yaml);
    }
  }
}

/**
 * N clusters with controllers (orphans collected after `graceSeconds`), joined in a star around
 * the first one: every later member is swapped with the first only (with `join`, or by hand
 * with kubectl as the quickstart says), so the group forms transitively through the core rules.
 */
/** `.cache/test-logs/<name>`, emptied: a group's logs stay there for a post-mortem (replaced by the next run). */
export function freshLogDir(name: string): string {
  const dir = fileURLToPath(new URL(`../../.cache/test-logs/${name}`, import.meta.url));
  rmSync(dir, { recursive: true, force: true });
  return dir;
}

/**
 * The group over a started sandbox, with an admin client per cluster, once `form` has formed it;
 * stopping it closes the clients and stops the sandbox, which also happens when forming fails.
 */
export async function groupOver(sandbox: Sandbox, form: (g: SyncGroup) => Promise<void>): Promise<SyncGroup> {
  const clients = new Map<string, RestClient>();
  const g: SyncGroup = {
    sandbox,
    names: sandbox.clusters.map((c) => c.name),
    client: (name) => clients.get(name) ?? (() => { throw new Error(`no cluster ${name}`); })(),
    // Checked on the way out, whatever the tests did: what they made the controllers send and log.
    stop: (exceptions) => stopChecked(sandbox, clients, exceptions),
  };
  try {
    for (const c of sandbox.clusters) clients.set(c.name, await adminClient(c));
    await form(g);
    return g;
  } catch (err) {
    // The start failed: that is the news, not what a half-formed group did.
    await g.stop().catch(() => undefined);
    throw err;
  }
}

export async function startSyncGroup(n: number, opts: { name: string; graceSeconds?: number; extraArgs?: readonly string[]; swap?: 'join' | 'kubectl' }): Promise<SyncGroup> {
  const sandbox = await startGroup({
    dir: freshLogDir(opts.name),
    clusters: n,
    controllerArgs: () => [`--orphan-grace-period=${opts.graceSeconds ?? 4}s`, '--rule-status-interval=1s', '--peer-health-interval=1s', ...(opts.extraArgs ?? [])],
  });
  return groupOver(sandbox, async (g) => {
    const first = g.names[0]!;
    for (const other of g.names.slice(1)) {
      if (opts.swap === 'kubectl') await kubectlSwap(sandbox.cluster(first), sandbox.cluster(other));
      else await join({ rest: g.client(first), label: first }, { rest: g.client(other), label: other }, { namespace: SANDBOX_NAMESPACE, timeoutMs: 120_000, progress: () => undefined });
    }
  });
}

export async function getOrUndefined<T extends KubeObject>(rest: RestClient, ref: ResourceRef, namespace: string | undefined, name: string): Promise<T | undefined> {
  try {
    return await rest.get<T>(ref, namespace, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Every member sees every member Ready (and, from peers, in sync). */
export async function waitGroupFormed(g: SyncGroup, timeoutMs = 120_000): Promise<void> {
  for (const viewer of g.names) {
    await eventually(
      `${viewer} to see the whole group Ready`,
      async () => {
        const { items } = await g.client(viewer).list<Cluster>(CLUSTERS);
        const states = items.map((c) => `${c.metadata.name ?? ''}: ${c.status?.state ?? 'no status'} ${c.status?.message ?? ''}`);
        if (items.length !== g.names.length || !items.every((c) => c.status?.state === 'Ready')) throw new Error(states.join('; ') || 'no Clusters');
        return true;
      },
      timeoutMs,
    );
  }
}

export function secret(namespace: string, name: string, data: Record<string, string>, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, ...extra },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

export function rule(name: string, spec: ResourceSyncRule['spec'], annotations?: Record<string, string>): ResourceSyncRule {
  return { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name, ...(annotations ? { annotations } : {}) }, spec };
}

/** Lets every controller of the group write, and every reader read, these resources of a group. */
export async function grantKinds(g: SyncGroup, name: string, apiGroup: string, resources: readonly string[]): Promise<void> {
  for (const c of g.names) await grantKindsOn(g.client(c), name, apiGroup, resources);
}

/** Lets the controller of one cluster write, and its readers read, these resources of a group. */
export async function grantKindsOn(rest: RestClient, name: string, apiGroup: string, resources: readonly string[]): Promise<void> {
  const role = (label: string, verbs: string[]): KubeObject => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: `${name}-${label.split('/')[1] ?? label}`, labels: { [label]: 'true' } },
    rules: [{ apiGroups: [apiGroup], resources: [...resources], verbs }],
  });
  for (const r of [role('cluster-registry.k8s.cisco.com/controller-aggregated', ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']), role('cluster-registry.k8s.cisco.com/reader-aggregated', ['get', 'list', 'watch'])]) {
    await rest.create(CLUSTER_ROLES, undefined, r).catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
  }
}

export async function ensureNamespace(rest: RestClient, name: string): Promise<void> {
  if (!(await getOrUndefined(rest, NAMESPACES, undefined, name))) await rest.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/** The Secret on `on`, once it has `data[key]` = `value` (decoded). */
export function waitSecretValue(g: SyncGroup, on: string, namespace: string, name: string, key: string, value: string, timeoutMs = 60_000): Promise<KubeObject> {
  return secretValueOn(g.client(on), on, namespace, name, key, value, timeoutMs);
}

/** The Secret a client reads (from the cluster `label` names), once it has `data[key]` = `value` (decoded). */
export function secretValueOn(rest: RestClient, label: string, namespace: string, name: string, key: string, value: string, timeoutMs = 60_000): Promise<KubeObject> {
  return eventually(`${label} to hold ${namespace}/${name} with ${key}=${value}`, async () => {
    const s = await getOrUndefined<KubeObject & { data?: Record<string, string> }>(rest, SECRETS, namespace, name);
    return s && Buffer.from(s.data?.[key] ?? '', 'base64').toString() === value ? s : undefined;
  }, timeoutMs);
}

export function waitGone(g: SyncGroup, on: string, ref: ResourceRef, namespace: string | undefined, name: string, timeoutMs = 60_000): Promise<true> {
  return goneFrom(g.client(on), on, ref, namespace, name, timeoutMs);
}

/** Once the object is gone from what a client reads (the cluster `label` names). */
export function goneFrom(rest: RestClient, label: string, ref: ResourceRef, namespace: string | undefined, name: string, timeoutMs = 60_000): Promise<true> {
  return eventually(`${namespace ?? ''}/${name} to be gone from ${label}`, async () => (await getOrUndefined(rest, ref, namespace, name)) === undefined || undefined, timeoutMs);
}

export { SANDBOX_NAMESPACE };

export const WIDGETS: ResourceRef = { group: 'example.com', version: 'v1', resource: 'widgets' };
type Widget = KubeObject & { spec?: { size?: number }; status?: { phase?: string } };

/** The Widget custom resource (with a status subresource) served on every member, synced and read by both roles, and namespace `ns`. */
export async function installWidgets(g: SyncGroup, ns: string): Promise<void> {
  const crd: KubeObject = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
  await grantKinds(g, 'widgets', 'example.com', ['widgets', 'widgets/status']);
  for (const c of g.names) {
    const rest = g.client(c);
    await rest.create(CUSTOM_RESOURCE_DEFINITIONS, undefined, crd);
    await ensureNamespace(rest, ns);
    await eventually(`widgets served on ${c}`, async () => (await rest.list(WIDGETS, { namespace: ns })).items);
  }
}

/** A rule syncing the Widgets of `ns` with their status, each copy renamed by a template to `<name>-from-<source cluster>`. */
export function renamingWidgetRule(name: string, ns: string): ResourceSyncRule {
  return rule(name, {
    groupVersionKind: { group: 'example.com', version: 'v1', kind: 'Widget' },
    rules: [{ match: [{ namespaces: [ns] }], mutations: { syncStatus: true, overrides: [{ type: 'replace', path: '/metadata/name', value: '{{ printf "%s-from-%s" .Object.GetName .Cluster.GetName }}' }] } }],
  });
}

/**
 * Under a `renamingWidgetRule`: Widget `name` made on `from` reaches each of `to` renamed; a change
 * of its status and then of its spec reaches the copies; deleting it deletes them.
 */
export async function renamedWidgetFollows(g: SyncGroup, o: { from: string; to: readonly string[]; ns: string; name: string }): Promise<void> {
  const src = g.client(o.from);
  const copyName = `${o.name}-from-${o.from}`;
  await src.create(WIDGETS, o.ns, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: o.name, namespace: o.ns }, spec: { size: 3 } });
  for (const c of o.to) await eventually(`the renamed Widget ${copyName} on ${c}`, () => getOrUndefined(g.client(c), WIDGETS, o.ns, copyName), 90_000);
  await src.patchStatus(WIDGETS, o.ns, o.name, 'merge', { status: { phase: 'Spinning' } });
  await src.update(WIDGETS, o.ns, { ...(await src.get<Widget>(WIDGETS, o.ns, o.name)), spec: { size: 5 } });
  for (const c of o.to) {
    await eventually(`the spec and status of ${copyName} on ${c}`, async () => {
      const w = await getOrUndefined<Widget>(g.client(c), WIDGETS, o.ns, copyName);
      return w?.spec?.size === 5 && w.status?.phase === 'Spinning';
    }, 90_000);
  }
  await src.delete(WIDGETS, o.ns, o.name);
  for (const c of o.to) await waitGone(g, c, WIDGETS, o.ns, copyName, 90_000);
}
