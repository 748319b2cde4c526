// Checks every group-based suite runs when it stops its group: no credential of the group (the
// reader tokens and webhook keys in the controller namespace, the hub tokens in the hub
// credentials namespace, the controllers' and the admin's tokens) appears in any log our
// controllers wrote, no controller of ours sent a peer anything but reads and access reviews, and
// the reader credential each of our members hands out can write nothing and read no Secret
// outside the controller namespace, hub credentials included (asked of the API server for real,
// as dry runs).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CLUSTERS, SECRETS, type Secret } from '../../src/core/api/resources.ts';
import type { Cluster } from '../../src/core/api/types.ts';
import { hubCredentialsNamespace } from '../../src/core/hub/index.ts';
import { ClusterConfig, RestClient, isForbidden, isNotFound, isUnauthorized } from '../../src/kube/index.ts';
import { CLOSED_HUBS_HOST, hubHostLabel } from '../../src/kube/rest.ts';
import { tokenKubeconfig, type Sandbox } from '../../src/sandbox/index.ts';
import { adminClient, SANDBOX_NAMESPACE } from '../../src/testbed/group.ts';
import { controllerSeries } from './registry.ts';

const HUB_CREDENTIALS_NAMESPACE = hubCredentialsNamespace(SANDBOX_NAMESPACE);

/** A private key's first line of base64: long and random enough to find, never a false match. */
const keyLine = (pem: string): string[] => pem.split('\n').filter((l) => /^[A-Za-z0-9+/]{40,}$/.test(l)).slice(0, 1);

type Kubeconfig = { users?: { user?: { token?: string; 'client-key-data'?: string } }[] } | null;

/** Tokens and client keys of a kubeconfig (the key both as written there and as its PEM's first line). */
const tokensIn = (kubeconfig: string): string[] =>
  ((parse(kubeconfig) as Kubeconfig)?.users ?? [])
    .flatMap((u) => [u.user?.token ?? '', u.user?.['client-key-data'] ?? '', ...keyLine(Buffer.from(u.user?.['client-key-data'] ?? '', 'base64').toString('utf8'))])
    .filter((t) => t.length >= 20);

/** Every credential of the group a log must never hold, each with what it is (said in failures instead of itself). */
export async function groupCredentials(sandbox: Sandbox, clients: ReadonlyMap<string, RestClient>): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const c of sandbox.clusters) {
    for (const t of tokensIn(c.kubeconfig)) found.set(t, `${c.name}'s admin token`);
    const dir = join(sandbox.dir, c.name);
    for (const f of readdirSync(dir).filter((f) => f.endsWith('.kubeconfig'))) for (const t of tokensIn(readFileSync(join(dir, f), 'utf8'))) found.set(t, `token of ${c.name}/${f}`);
    const rest = clients.get(c.name);
    if (!rest) continue;
    // A cluster a test left down keeps its Secrets to itself; the others still hold copies of its reader's.
    const secrets: Secret[] = [];
    for (const namespace of [SANDBOX_NAMESPACE, HUB_CREDENTIALS_NAMESPACE]) secrets.push(...(await rest.list<Secret>(SECRETS, { namespace }).then((l) => l.items, () => [])));
    for (const s of secrets) {
      for (const [key, value] of Object.entries(s.data ?? {})) {
        const text = Buffer.from(value, 'base64').toString('utf8');
        const what = `${c.name}'s Secret ${s.metadata.name ?? ''} key ${key}`;
        if (key === 'kubeconfig') for (const t of tokensIn(text)) found.set(t, `token in ${what}`);
        if (/PRIVATE KEY/.test(text)) for (const l of keyLine(text)) found.set(l, `private key in ${what}`);
      }
    }
  }
  return found;
}

/** Our controllers' logs that hold any of the credentials: "<file>: <what>" (never the credential). */
export function credentialsInLogs(sandbox: Sandbox, credentials: ReadonlyMap<string, string>): string[] {
  const dir = join(sandbox.dir, 'logs');
  const leaks: string[] = [];
  for (const f of readdirSync(dir).filter((f) => f.endsWith('-controller.log') && !f.endsWith('-upstream-controller.log'))) {
    const text = readFileSync(join(dir, f), 'utf8');
    for (const [secret, what] of credentials) if (text.includes(secret)) leaks.push(`${f}: ${what}`);
  }
  return leaks;
}

/** What a check allows beyond the rules: the hub each spoke of a hub-and-spoke sync writes its status to, by spoke. */
export interface CheckExceptions {
  readonly hubs?: ReadonlyMap<string, string>;
}

/**
 * Requests our controllers sent a peer that were not reads or POSTs, by "cluster -> host method".
 * A POST to a peer can only be a self access review: the peer client refuses anything else before
 * sending it (kube/rest.test.ts). A spoke's PATCHes and PUTs to its hub are its status reports
 * (and a POST there, the renewal of its own token): the hub client refuses any other write
 * (hub/sync.test.ts).
 */
export async function writesToPeers(sandbox: Sandbox, ours: readonly string[], exceptions: CheckExceptions = {}): Promise<string[]> {
  const writes: string[] = [];
  for (const name of ours) {
    const local = new URL(sandbox.cluster(name).server).host;
    const hubName = exceptions.hubs?.get(name);
    // Requests to a peer or hub are counted under its Cluster name, not its address.
    const hub = hubName ? hubHostLabel(hubName) : undefined;
    // A controller a test left stopped has nothing more to say.
    const series = await controllerSeries(sandbox, name, 'rest_client_requests_total').catch(() => []);
    for (const s of series) {
      const method = s.labels['method'] ?? '';
      // Clients of peers (and hubs) that closed leave their counts under one label.
      const report = hub !== undefined && (s.labels['host'] === hub || s.labels['host'] === CLOSED_HUBS_HOST) && ['PATCH', 'PUT'].includes(method);
      if (s.labels['host'] !== local && !report && !['GET', 'WATCH', 'POST'].includes(method) && s.value > 0) writes.push(`${name} -> ${s.labels['host'] ?? ''} ${method} x${s.value}`);
    }
  }
  return writes;
}

/** The compat role that lets upstream's members read every Secret (installed only where one reads the cluster). */
const UPSTREAM_PEERS_ROLE = 'cluster-registry-controller-reader-upstream-peers';

/** What the reader credential of each of our members was allowed that it must not be: "cluster: what". */
export async function readerOverreach(sandbox: Sandbox, ours: readonly string[], clients: ReadonlyMap<string, RestClient>): Promise<string[]> {
  const found: string[] = [];
  for (const name of ours) {
    const admin = clients.get(name);
    const c = sandbox.cluster(name);
    const ref = (await admin?.get<Cluster>(CLUSTERS, undefined, name).catch(() => undefined))?.spec.authInfo?.secretRef;
    const own = ref?.name && ref.namespace ? await admin?.get<Secret>(SECRETS, ref.namespace, ref.name).catch(() => undefined) : undefined;
    const token = own ? tokensIn(Buffer.from(own.data?.['kubeconfig'] ?? '', 'base64').toString('utf8'))[0] : undefined;
    if (!admin || !token) continue;
    const reader = new RestClient(await ClusterConfig.fromString(tokenKubeconfig({ name, server: c.server, caPem: c.caPem, user: 'reader', token })).connection());
    const refused = async (what: string, call: () => Promise<unknown>): Promise<void> => {
      try {
        await call();
        found.push(`${name}: the reader may ${what}`);
      } catch (err) {
        // A token revoked meanwhile (a member that left) may do nothing at all.
        if (!isForbidden(err) && !isUnauthorized(err)) found.push(`${name}: asking whether the reader may ${what} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    };
    try {
      const dryRun = { dryRun: 'All' };
      await refused('create a ConfigMap', () => reader.json({ method: 'POST', path: `/api/v1/namespaces/${SANDBOX_NAMESPACE}/configmaps`, query: dryRun, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'reader-probe' } } }));
      await refused('create a Secret in its namespace', () => reader.json({ method: 'POST', path: `/api/v1/namespaces/${SANDBOX_NAMESPACE}/secrets`, query: dryRun, body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'reader-probe' } } }));
      await refused('change a Cluster', () => reader.json({ method: 'PATCH', path: `/apis/clusterregistry.k8s.cisco.com/v1alpha1/clusters/${name}`, query: dryRun, contentType: 'application/merge-patch+json', body: { metadata: { labels: { probe: 'x' } } } }));
      await refused('delete a ServiceAccount', () => reader.json({ method: 'DELETE', path: `/api/v1/namespaces/${SANDBOX_NAMESPACE}/serviceaccounts/cluster-registry-controller-reader`, query: dryRun }));
      const widened = await admin.get({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' }, undefined, UPSTREAM_PEERS_ROLE).then(
        () => true,
        (err: unknown) => {
          if (isNotFound(err)) return false;
          throw err;
        },
      );
      if (!widened) await refused('read Secrets in kube-system', () => reader.list(SECRETS, { namespace: 'kube-system' }));
      // A hub token readable there would let any member act as this cluster on its hub.
      if (!widened) await refused('read hub credentials', () => reader.list(SECRETS, { namespace: HUB_CREDENTIALS_NAMESPACE }));
    } finally {
      reader.close();
    }
  }
  return found;
}

/**
 * Stops a sandbox running the product after checking what its controllers sent and logged and
 * what its readers may do; throws, once everything is stopped, if any rule was broken. `clients`
 * are admin clients by cluster name (made here when not given; closed here either way).
 */
export async function stopChecked(sandbox: Sandbox, clients?: Map<string, RestClient>, exceptions: CheckExceptions = {}): Promise<void> {
  const admins = clients ?? new Map<string, RestClient>();
  const problems: string[] = [];
  try {
    if (!clients) for (const c of sandbox.clusters) admins.set(c.name, await adminClient(c));
    const ours = sandbox.clusters.filter((c) => c.extras[0]?.name.startsWith('cluster-registry-controller')).map((c) => c.name);
    problems.push(...(await writesToPeers(sandbox, ours, exceptions)).map((w) => `a write to a peer: ${w}`));
    problems.push(...(await readerOverreach(sandbox, ours, admins)).map((r) => `a reader allowed too much: ${r}`));
    problems.push(...credentialsInLogs(sandbox, await groupCredentials(sandbox, admins)).map((l) => `a credential in a log: ${l}`));
  } finally {
    for (const c of admins.values()) c.close();
    await sandbox.stop();
  }
  if (problems.length > 0) throw new Error(`the group broke a security rule:\n${problems.join('\n')}`);
}
