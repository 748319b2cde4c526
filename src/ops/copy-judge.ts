// What one member's sync would do with one source's copy, decided as the controller decides (the
// same matching, mutation, ownership, trust and drift code), without writing anything: `explain`
// asks it of the cluster it runs on, `trace` of every member it can read.
import { stringify } from 'yaml';
import { addressable, gvkOf, hasCopyMarks, isSecret, NAMESPACES, type FullGVK } from '../core/api/index.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { lineDiff } from '../core/diff/line-diff.ts';
import {
  adoptionChoices,
  adoptionPolicyOf,
  applyBody,
  applyNeeded,
  copyPlace,
  decideCopy,
  DECISION_REASONS,
  describeDrift,
  describeMutationFailure,
  desiredCopy,
  driftOutcome,
  FIELD_MANAGER,
  planCopyUpdate,
  replacedFields,
  RuleError,
  specPart,
  upstreamBody,
  upstreamCopyInSync,
  type CopyUpdate,
  type OwnershipFacts,
  type PeerRef,
  type RuleState,
} from '../core/rules/index.ts';
import { hubCredentialsNamespace } from '../core/hub/index.ts';
import { keepingVouch, mayHold, type TrustFacts } from '../core/trust/index.ts';
import { NoKindMatchError, type ApiResource, type Discovery, type ObjectReader } from '../kube/index.ts';
import { credentialsTarget } from '../peers/connection.ts';
import { call } from './peer-access.ts';

export type CopyAction = 'create' | 'update' | 'delete' | 'none' | 'refused' | 'failed' | 'withheld';

/** The reason of a copy that holds what the sync would write now. */
export const IN_SYNC = 'in sync';

/**
 * The diff of a Secret's copy, whatever kind the copy is: a rule may put the Secret's values in any
 * field (a kind mutation, a template into a label), so none of what it makes is shown.
 */
export const SECRET_DIFF_WITHHELD = "(not shown: the source is a Secret, and this rule's templates or kind change may carry its values into any field of the copy)";
/** Where a template over a Secret puts its copy: its name may hold the Secret's values. */
export const SECRET_PLACE_WITHHELD = 'where its copy goes is made by a template over a Secret: neither shown nor looked up';

/** `namespace/name`, or `name` for a cluster-scoped object. */
export const objectName = (o: KubeObject): string => `${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name ?? ''}`;
/** `Kind namespace/name`. */
export const objectLabel = (o: KubeObject): string => `${o.kind ?? ''} ${objectName(o)}`;

/** The member whose sync is asked: what it holds and how it sees the group. */
export interface MemberView {
  /** Its kube-system UID. */
  readonly id: string;
  readonly reader: Pick<ObjectReader, 'get' | 'getIfExists' | 'list'>;
  readonly discovery: Pick<Discovery, 'resourceFor' | 'all'>;
  /** Its registry. */
  readonly clusters: readonly Cluster[];
  /** The controller namespace. */
  readonly namespace: string;
  /** How reasons name the member: `here` where the command runs, `there` for a peer. */
  readonly here: 'here' | 'there';
  readonly signal?: AbortSignal;
  /**
   * It runs another controller (upstream's), which writes no sync record of ours and owns its
   * fields under its own manager: its copies are judged by what they hold.
   */
  readonly otherController?: boolean;
}

export interface CopyJudgement {
  /** `Kind namespace/name` of the copy, or `-` when where it goes cannot be said. */
  readonly copy: string;
  readonly action: CopyAction;
  readonly reason: string;
  /** The copy as it would be written (create), or what would change in it (update); Secret values hidden. */
  readonly diff?: string;
  /** Where the copy goes (copyPlace), once that is known and served. */
  readonly place?: string;
  /** The same place, as its kind and namespace. */
  readonly spot?: { readonly gvk: FullGVK; readonly namespace: string | undefined };
  /** A mutation failed on the source: where its copy would go cannot be said. */
  readonly unplaceable?: true;
  /** What the member holds at the copy's place. */
  readonly current?: KubeObject;
  /** The update as the drift policy shapes it, when the copy is there to update. */
  readonly update?: CopyUpdate;
  /** The update takes over a local object that is no copy yet (a rule's adoptionPolicy, or a registry entry copied by hand). */
  readonly takesOver?: true;
}

type Valued = KubeObject & { data?: Record<string, string>; stringData?: Record<string, string> };

/**
 * A Secret's values hidden, as `kubectl diff` hides them: the diff says which keys the write
 * changes (marked on the new side), never what any of them holds.
 */
export function masked(before: unknown, after: KubeObject): [unknown, KubeObject] {
  if (!isSecret(after)) return [before, after];
  const b = before as Valued | undefined;
  const a = after as Valued;
  const mask = (mine: Record<string, string> | undefined, other: Record<string, string> | undefined, mark: boolean) =>
    mine && Object.fromEntries(Object.keys(mine).map((k) => [k, mark && other?.[k] !== mine[k] ? '(hidden, changed)' : '(hidden)']));
  const hide = (o: Valued, other: Valued | undefined, mark: boolean): Valued => ({ ...o, ...(o.data ? { data: mask(o.data, other?.data, mark) } : {}), ...(o.stringData ? { stringData: mask(o.stringData, other?.stringData, mark) } : {}) });
  return [b && typeof b === 'object' ? hide(b, undefined, false) : b, hide(a, b, b !== undefined)];
}

/** The rule as a controller without adoption runs it. */
function withoutAdoption(rule: RuleState): RuleState {
  const { adoptionPolicy: _, ...spec } = rule.spec;
  return { ...rule, spec };
}

/** What writing `body` over `current` would change, as a line diff (Secret values hidden); undefined when nothing shows. */
function diffOf(current: KubeObject, body: KubeObject): string | undefined {
  const [was, will] = masked(projected(current, body), body);
  return lineDiff(stringify(was).trimEnd(), stringify(will).trimEnd()) || undefined;
}

/** The fields of `current` the desired copy sets, so the diff shows what the write changes and not what others added. */
function projected(current: unknown, desired: unknown): unknown {
  if (!current || !desired || typeof current !== 'object' || typeof desired !== 'object' || Array.isArray(desired)) return current;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(desired)) if (key in current) out[key] = projected((current as Record<string, unknown>)[key], (desired as Record<string, unknown>)[key]);
  return out;
}

/**
 * What the member's sync would do with the copy `rule` makes of `source`, read from `from`;
 * undefined when the rule does not take the source. `facts` are the member's, as far as they are
 * known to the caller.
 */
export async function judgeCopy(view: MemberView, rule: RuleState, from: PeerRef, facts: OwnershipFacts, source: KubeObject): Promise<CopyJudgement | undefined> {
  const opts = call(view.signal);
  const secret = isSecret(source);
  // What a template renders over a Secret may quote its values: never said, nor sent in a request.
  const rendered = secret && rule.readsRegistry;
  let made;
  try {
    made = desiredCopy(rule, from, source, { localClusterID: view.id, clusters: view.clusters });
  } catch (err) {
    if (!(err instanceof RuleError)) throw err;
    // Where its copy would go cannot be said: the copy it has, if any, is kept (as the collector does).
    return { copy: '-', action: 'failed', reason: `could not mutate it: ${describeMutationFailure(err, secret)}`, unplaceable: true };
  }
  if (!made) return undefined;
  const { desired, mutations } = made;
  const kind = desired.kind ?? '';
  if (rendered && (desired.metadata.name !== source.metadata.name || desired.metadata.namespace !== source.metadata.namespace)) {
    return { copy: `${kind} -`, action: 'withheld', reason: SECRET_PLACE_WITHHELD, unplaceable: true };
  }
  let resource: ApiResource;
  try {
    resource = await view.discovery.resourceFor(gvkOf(desired));
  } catch (err) {
    if (!(err instanceof NoKindMatchError)) throw err;
    return { copy: objectLabel(desired), action: 'failed', reason: `kind ${kind} is not served ${view.here}` };
  }
  if (!resource.namespaced) delete desired.metadata.namespace;
  else if (!desired.metadata.namespace) return { copy: objectLabel(desired), action: 'failed', reason: `${kind} is namespaced ${view.here}, but the copy has no namespace` };
  // As the sync: no request is made for a name no request path can hold (it would name another object, or none).
  if (!addressable(desired)) return { copy: `${kind} -`, action: 'refused', reason: `the copy's name or namespace ${secret ? '' : `(${JSON.stringify(objectName(desired))}) `}is not one an object can have`, unplaceable: true };
  const place = copyPlace(desired);
  const spot = { gvk: gvkOf(desired), namespace: desired.metadata.namespace };
  const at = (action: CopyAction, reason: string, more: Partial<CopyJudgement> = {}): CopyJudgement => ({ copy: objectLabel(desired), action, reason, place, spot, ...more });
  const ns = desired.metadata.namespace;
  if (ns && (await view.reader.getIfExists(NAMESPACES, undefined, ns, opts)) === undefined) return at('none', `waits for namespace ${ns} to exist ${view.here}`);
  const current = await view.reader.getIfExists(resource, ns, desired.metadata.name ?? '', opts);
  const held = current ? { current } : {};
  // Upstream's controller knows no adoptionPolicy: it never takes over a local object.
  const decision = decideCopy(view.otherController ? withoutAdoption(rule) : rule, from, facts, { source, desired, current, syncStatus: mutations.syncStatus, clusters: view.clusters });
  const trust: TrustFacts = { localClusterID: view.id, namespace: view.namespace, clusters: view.clusters, reserved: [], closedNamespaces: [hubCredentialsNamespace(view.namespace)], credentialsTarget };
  const policy = decision.action === 'none' ? undefined : mayHold(desired, { channel: rule.channel, from: from.id, current }, trust);
  if (policy && !policy.allowed) return at('refused', rendered ? 'the trust boundary refuses it (why is withheld: a template over a Secret made the copy)' : policy.reason, held);
  const part = specPart(resource);
  // A Secret copied as a Secret shows with its values hidden; one a template renders over, or a
  // kind change makes into something else, could carry its values anywhere: no diff.
  const withheld = secret && (rule.readsRegistry || !isSecret(desired));
  const shown = (diff: () => string | undefined): { diff?: string } => {
    const d = withheld ? SECRET_DIFF_WITHHELD : diff();
    return d ? { diff: d } : {};
  };
  if (decision.action === 'create') return at('create', `no copy ${view.here} yet`, shown(() => stringify(masked(undefined, applyBody(desired, part))[1]).trimEnd()));
  if (decision.action === 'update' && current && view.otherController && hasCopyMarks(current)) {
    if (upstreamCopyInSync(current, desired, part, decision.writeStatus)) return at('none', IN_SYNC, held);
    return at('update', 'the copy differs from what the rule makes', { current, ...shown(() => diffOf(current, upstreamBody(desired, part))) });
  }
  if (decision.action === 'update' && current) {
    // An entry this member vouches for stays vouched for, as in the sync.
    const update = planCopyUpdate(rule, source, keepingVouch(desired, current), current, { part, localClusterID: view.id, unkept: new Set() });
    if (update.policyError) return at('failed', rendered ? 'the drift policy could not be read (why is withheld: a template over a Secret made the copy)' : update.policyError, { current, update });
    const { body, plan } = update;
    const drift = update.fields.length > 0 ? `edited ${view.here}, not at its source: ${describeDrift(update.fields)}; ${update.policy}: ${driftOutcome(update)}` : undefined;
    const writes =
      (body !== undefined && applyNeeded(body, current, FIELD_MANAGER, part)) ||
      (plan.apply !== 'none' && decision.writeStatus && desired['status'] !== undefined && resource.subresources.includes('status') && applyNeeded(desired, current, FIELD_MANAGER, 'status'));
    if (!writes) return at('none', drift ?? IN_SYNC, { current, update });
    const adopting =
      decision.reason === DECISION_REASONS.adopt
        ? `takes over the local object there (adoptionPolicy ${adoptionPolicyOf(rule).policy})`
        : rule.adopts?.(current, from, view.clusters)
          ? 'takes over the registry entry copied there by hand'
          : undefined;
    return at('update', adopting ?? drift ?? 'the copy differs from what the rule makes', { current, update, ...(adopting ? { takesOver: true as const } : {}), ...shown(() => diffOf(current, body ?? desired)) });
  }
  if (decision.reason === DECISION_REASONS.locallyOwned && current) {
    // What each adoption policy would do, with what it would replace, before anyone chooses one.
    const { policy: adoption, why } = adoptionPolicyOf(rule);
    const replaced = replacedFields(current, desired);
    return at('none', `a local object is in the way (adoptionPolicy ${adoption}${why ? `: ${why}` : ''}); ${adoptionChoices(replaced)}`, { current, ...(replaced.length > 0 ? shown(() => diffOf(current, applyBody(desired, part))) : {}) });
  }
  return at('none', decision.reason, held);
}
