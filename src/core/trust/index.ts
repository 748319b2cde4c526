// The trust boundary: what a peer (through a rule, the registry's own rules included) or a hub
// may make this cluster hold. Every path that writes something read from another cluster asks
// `mayHold` first, whatever the rule says: rules travel between the members of a group, so a
// rule may come from a member that is hostile, and it runs with this controller's rights. The
// tables here are a floor, not a fence: those rights are still best granted kind by kind.

import { gvkOf } from '../api/gvk.ts';
import { API_GROUP, KINDS } from '../api/keys.ts';
import { isSecret } from '../api/resources.ts';
import type { Cluster, KubeObject } from '../api/types.ts';
import { contentProblem } from './content.ts';
import { kindClass, type Channel } from './kinds.ts';
import { placeProblem, type ObjectPlace } from './places.ts';
import { clusterEntryRefusal, credentialsRefusal, isCredentials, type RegistryFacts } from './registry.ts';

export { copiesPerRuleAndPeer, inPeerCopyBudget, REGISTRY_COPIES_PER_PEER } from './budgets.ts';
export { ruleChannel } from './channel.ts';
export { builtinKindClass, isKubernetesGroup, kindClass, type Channel, type KindClass } from './kinds.ts';
export { SYSTEM_NAMESPACES, type ObjectPlace } from './places.ts';
export { credentialsInUse, credentialsRef, keepingVouch, namesCredentials, reachedFirstHand, speakerFor, vouchedEntry, VOUCHED_BY, type CredentialsRef, type RegistryFacts } from './registry.ts';

export interface TrustFacts extends RegistryFacts {
  /** What the controller keeps for itself here (its webhook's serving Secret). */
  readonly reserved: readonly ObjectPlace[];
  /** Namespaces of ours nothing is ever delivered into (the hub credentials'). */
  readonly closedNamespaces: readonly string[];
}

/** How an object arrives: by which channel, from which cluster, onto what. */
export interface Delivery {
  readonly channel: Channel;
  /** kube-system UID of the cluster it is read from. */
  readonly from: string;
  /** What is at its place here now, when known (a copy we hold). */
  readonly current: KubeObject | undefined;
}

export type TrustVerdict =
  | { readonly allowed: true }
  /** `untilRegistryChanges`: the verdict may change once the registry does (a Cluster arriving). */
  | { readonly allowed: false; readonly reason: string; readonly untilRegistryChanges?: boolean };

const ALLOWED: TrustVerdict = { allowed: true };
const refuse = (reason: string, untilRegistryChanges = false): TrustVerdict => ({ allowed: false, reason, ...(untilRegistryChanges ? { untilRegistryChanges } : {}) });

/** Whether this cluster may hold `desired`, delivered as `d` says. */
export function mayHold(desired: KubeObject, d: Delivery, f: TrustFacts): TrustVerdict {
  const gvk = gvkOf(desired);
  const kind = kindClass(gvk.group, gvk.kind, d.channel);
  if (!kind.synced) return refuse(`${gvk.kind}${gvk.group ? `.${gvk.group}` : ''} objects are never synced here: ${kind.reason}`);
  const meta = desired.metadata ?? {};
  if (meta.generateName !== undefined) return refuse('a copy is never written with metadata.generateName: it needs a name of its own');
  const name = meta.name ?? '';
  // No name the API server would take for another path, or an object of another name.
  if (name === '' || name === '.' || name === '..' || /[/%]/.test(name)) return refuse(`${JSON.stringify(name)} is not a name a copy can have`);
  const secretType = typeof desired['type'] === 'string' ? desired['type'] : undefined;
  const problem = placeProblem({ group: gvk.group, kind: gvk.kind, namespace: meta.namespace ?? '', name }, isSecret(desired) ? secretType : undefined, meta.labels ?? {}, d.channel, { namespace: f.namespace, closedNamespaces: f.closedNamespaces, reserved: f.reserved });
  if (problem) return refuse(problem);
  const said = contentProblem(desired);
  if (said) return refuse(said);
  const refusal =
    gvk.group === API_GROUP && gvk.kind === KINDS.cluster
      ? clusterEntryRefusal(desired as Cluster, d.from, d.current, f)
      : isSecret(desired) && isCredentials(desired)
        ? credentialsRefusal(desired, d.from, d.current, f)
        : undefined;
  return refusal ? refuse(refusal.reason, refusal.untilRegistryChanges) : ALLOWED;
}
