// What a HubSyncRule may run on. A rule is this cluster's own word: one that a peer's sync
// delivered (it carries a copy's marks) would make this cluster connect wherever that peer says
// and write what it reads there, so it never runs. Its credentials must be hub credentials,
// which only `hub grant` (or an admin, on purpose) writes: never the registry's reader
// credentials, which a rule could otherwise name to reach a member with the token we hold for it.
// They are kept in a namespace of their own, out of the reach of the reader token every member
// holds (it reads the controller namespace's Secrets).
import { ANNOTATIONS, CLUSTER_SECRET, HUB_CREDENTIALS, LABELS } from '../api/keys.ts';
import type { Secret } from '../api/resources.ts';
import { hasCopyMarks } from '../api/source-identity.ts';
import type { Cluster, KubeObject } from '../api/types.ts';
import { cut } from '../api/text.ts';
import { namesCredentials } from '../trust/index.ts';
import { isNamespaceName } from './names.ts';

/** Why a HubSyncRule may not run here because it is another cluster's, or undefined when it is this cluster's own. */
export function foreignRule(rule: KubeObject): string | undefined {
  if (!hasCopyMarks(rule)) return undefined;
  const owner = rule.metadata.annotations?.[ANNOTATIONS.ownership] ?? rule.metadata.labels?.[LABELS.ownership];
  return `it carries the marks of a copy synced from another cluster${owner ? ` (${cut(owner, 64)})` : ''}: a HubSyncRule runs only on the cluster it was written on`;
}

/** Why `secret` may not serve as hub credentials, or undefined when it may. */
export function hubCredentialsProblem(secret: Secret, clusters: readonly Cluster[]): string | undefined {
  const where = `Secret ${secret.metadata.namespace ?? ''}/${secret.metadata.name ?? ''}`;
  const type = secret.type ?? 'Opaque';
  if (type !== HUB_CREDENTIALS.type) {
    const what = type === CLUSTER_SECRET.type ? "the registry's reader credentials" : `of type ${cut(type, 64)}`;
    return `${where} is ${what}, not hub credentials (type ${HUB_CREDENTIALS.type}, made by cluster-registry hub grant)`;
  }
  if (hasCopyMarks(secret)) return `${where} carries the marks of a copy synced from another cluster: hub credentials are only ever this cluster's own`;
  const namer = clusters.find((c) => namesCredentials(c, secret.metadata));
  if (namer) return `${where} is the credentials Cluster ${namer.metadata.name ?? ''} is read with, not hub credentials`;
  return undefined;
}

/** Where hub credentials are kept: `setting`, or `<controller namespace>-hub` when it is empty. */
export function hubCredentialsNamespace(controllerNamespace: string, setting = ''): string {
  return setting || `${controllerNamespace}${HUB_CREDENTIALS.namespaceSuffix}`;
}

/** Why `namespace` cannot hold hub credentials, or undefined when it can. */
export function hubCredentialsNamespaceProblem(namespace: string, controllerNamespace: string): string | undefined {
  if (!isNamespaceName(namespace)) return `${JSON.stringify(namespace)} is not a namespace name (set it explicitly when the controller namespace is too long for the ${HUB_CREDENTIALS.namespaceSuffix} suffix)`;
  if (namespace === controllerNamespace) return `it is the controller namespace, whose Secrets every member of the group reads: hub credentials there would let any member act as this spoke on its hub`;
  return undefined;
}

/**
 * Why the Secret an earlier `hub grant` left in the controller namespace (where every member
 * reads Secrets) is not used: what it holds may have been read by any member, so it is not moved
 * but granted anew. Undefined when `secret` is not such credentials.
 */
export function misplacedCredentials(secret: Secret, credentialsNamespace: string): string | undefined {
  const granted = secret.type === HUB_CREDENTIALS.type || HUB_CREDENTIALS.spokeLabel in (secret.metadata.labels ?? {});
  if (!granted || hasCopyMarks(secret)) return undefined;
  const where = `Secret ${secret.metadata.namespace ?? ''}/${secret.metadata.name ?? ''}`;
  return `${where} holds hub credentials where every member of the group can read them (an earlier hub grant put them there): they are not used; run cluster-registry hub grant again, which makes the spoke's hub token anew and keeps it in namespace ${credentialsNamespace}`;
}
