// Builds the desired local copy of a peer object, in upstream's exact order. The input is
// never changed: everything works on a deep copy (aliasing a cached object causes write ping-pong).

import { parse as parseYAML } from 'yaml';
import { formatApiVersion, formatOriginalGVK, fullGVK, gvkKey, gvkOf, type FullGVK } from '../api/gvk.ts';
import { cloneJSON, without } from '../api/clone.ts';
import { ANNOTATIONS, API_GROUP, CLUSTER_SECRET, KINDS, LABELS, OUR_KEY_PREFIX, OVERRIDE_TYPES, STRIPPED_ANNOTATIONS } from '../api/keys.ts';
import { isSecret } from '../api/resources.ts';
import { formatSourceIdentity } from '../api/source-identity.ts';
import type { Cluster, GroupVersionKind, KeyMutations, KubeObject, ObjectMeta, Override, ResourceSyncRuleSpec, SyncRule } from '../api/types.ts';
import { applyOps, parsePointer, type Op, type Token } from '../../go/gopatch/index.ts';
import { Budget, DecodeError, renderTemplate, templateData } from '../../go/template/index.ts';
import { errorMessage, RuleError } from './errors.ts';
import { runThrough, type Pausable } from './pausable.ts';
import { namesCredentials } from '../trust/registry.ts';

export interface KeyChanges {
  add: Record<string, string>;
  remove: string[];
}

/** An override with its location in the rule, for error messages. */
export interface LocatedOverride {
  override: Override;
  at: string;
}

export interface CombinedMutations {
  annotations: KeyChanges;
  labels: KeyChanges;
  /** Only the non-empty fields of the matched rules' GVK mutations; undefined when none has one. */
  groupVersionKind: GroupVersionKind | undefined;
  overrides: LocatedOverride[];
  syncStatus: boolean;
}

export interface MutationContext {
  /** kube-system UID of the peer the source was read from. */
  syncedFromClusterID: string;
  localClusterID: string;
  /** The local registry's Cluster CRs: template data, and whose credentials a Secret holds. */
  clusters: readonly Cluster[];
  /** The rule the copy is made by, recorded in the copy's source identity. */
  rule?: string;
  /**
   * The rule passes the registry on (the core rules for Clusters and their credentials): another
   * cluster's entry that the peer holds without an owner is passed on for that cluster.
   */
  relaysRegistry?: boolean;
}

/**
 * Matched rules' mutations merged in order: maps later-wins, lists concatenated, syncStatus
 * any-of. With `spec` (which the matched rules come from) override errors name their rule index.
 */
export function combineMutations(matchedRules: readonly SyncRule[], spec?: ResourceSyncRuleSpec): CombinedMutations {
  const out: CombinedMutations = {
    annotations: { add: {}, remove: [] },
    labels: { add: {}, remove: [] },
    groupVersionKind: undefined,
    overrides: [],
    syncStatus: false,
  };
  matchedRules.forEach((rule, k) => {
    const m = rule.mutations;
    if (!m) return;
    const ruleAt = spec ? `spec.rules[${spec.rules.indexOf(rule)}]` : `matchedRules[${k}]`;
    Object.assign(out.annotations.add, m.annotations?.add);
    out.annotations.remove.push(...(m.annotations?.remove ?? []));
    Object.assign(out.labels.add, m.labels?.add);
    out.labels.remove.push(...(m.labels?.remove ?? []));
    out.groupVersionKind = overlayGVK(out.groupVersionKind, m.groupVersionKind);
    (m.overrides ?? []).forEach((override, j) => out.overrides.push({ override, at: `${ruleAt}.mutations.overrides[${j}]` }));
    out.syncStatus ||= m.syncStatus === true;
  });
  return out;
}

function overlayGVK(base: GroupVersionKind | undefined, m: GroupVersionKind | undefined): GroupVersionKind | undefined {
  if (!m || (!m.group && !m.version && !m.kind)) return base;
  const next: GroupVersionKind = { ...base };
  if (m.group) next.group = m.group;
  if (m.version) next.version = m.version;
  if (m.kind) next.kind = m.kind;
  return next;
}

/**
 * Every GVK a rule can write locally: the result of each ordered subset of its rules' GVK
 * mutations (the empty subset is the source GVK). Upstream watches only the all-rules fold, so
 * it missed copies whose object matched only some rules; watching each of these covers what the
 * per-object writes actually produce.
 */
export function possibleTargetGVKs(spec: ResourceSyncRuleSpec): FullGVK[] {
  return targetsUpTo(spec, Infinity) ?? [];
}

/**
 * Whether a rule can write more than `max` kinds besides its source's. Partial GVK mutations
 * combine (one rule sets the group, another the kind), so the count can grow far past the
 * number of mutations: counting stops as soon as it is over.
 */
export function writesMoreKindsThan(spec: ResourceSyncRuleSpec, max: number): boolean {
  return targetsUpTo(spec, max + 1) === undefined;
}

/** Where a copy's owner is kept: the ownership annotation and the label of the same key. */
const OWNER_PATHS: readonly (readonly string[])[] = [
  ['metadata', 'annotations', ANNOTATIONS.ownership],
  ['metadata', 'labels', LABELS.ownership],
];

/** Whether an override's path may reach a copy's owner: the owner itself, or a map above it. */
function overrideMayReachOwner(path: string | undefined): boolean {
  let tokens: readonly Token[];
  try {
    tokens = parsePointer(path ?? '').tokens.slice(1);
  } catch {
    // An invalid path fails the rule anyway; it counts as reaching everything.
    return true;
  }
  return OWNER_PATHS.some((place) => tokens.slice(0, place.length).every((t, i) => t.kind === 'key' && t.key === place[i]));
}

/**
 * Whether some mutation of the rules may set or drop a copy's owner (a key mutation naming it, or
 * an override reaching it). When none can, every copy the rules make keeps its source's owner,
 * so what a copy's owner will be is known from the source alone, before any copy is built.
 */
export function mayChangeOwner(rules: readonly SyncRule[]): boolean {
  return rules.some((r) => {
    const m = r.mutations;
    const names = (k: KeyMutations | undefined, key: string): boolean => Object.hasOwn(k?.add ?? {}, key) || (k?.remove ?? []).includes(key);
    return names(m?.annotations, ANNOTATIONS.ownership) || names(m?.labels, LABELS.ownership) || (m?.overrides ?? []).some((o) => overrideMayReachOwner(o.path));
  });
}

function targetsUpTo(spec: ResourceSyncRuleSpec, max: number): FullGVK[] | undefined {
  const seen = new Map<string, FullGVK>();
  const add = (g: FullGVK): void => {
    seen.set(gvkKey(g), g);
  };
  add(fullGVK(spec.groupVersionKind));
  for (const rule of spec.rules) {
    for (const g of [...seen.values()]) {
      add(fullGVK(overlayGVK(g, rule.mutations?.groupVersionKind) ?? g));
      if (seen.size > max) return undefined;
    }
  }
  return [...seen.values()];
}

/** The GVK a copy is written as, given the combined mutations. */
export function targetGVK(source: GroupVersionKind, m: CombinedMutations): FullGVK {
  return fullGVK({ ...source, ...m.groupVersionKind });
}

function applyKeyChanges(map: Record<string, string> | undefined, changes: KeyChanges): Record<string, string> {
  const out = { ...map, ...changes.add };
  return changes.remove.length > 0 ? without(out, changes.remove) : out;
}

/**
 * The source's own history rather than its content: the server's bookkeeping, its owners and
 * finalizers (which are of its cluster), and generateName (how it was named, not a name: a copy is
 * always written under a name of its own).
 */
const SOURCE_HISTORY = ['generateName', 'generation', 'resourceVersion', 'uid', 'selfLink', 'creationTimestamp', 'finalizers', 'ownerReferences', 'managedFields'] as const satisfies readonly (keyof ObjectMeta)[];

/**
 * Strips the source's history, and the annotations that must not travel, from `obj`: its metadata
 * (and annotations, when one goes) are replaced by copies without them; idempotent.
 */
export function stripSourceMetadata(obj: KubeObject): void {
  const meta = obj.metadata;
  if (!meta) return;
  obj.metadata = without(meta, SOURCE_HISTORY);
  if (meta.annotations && STRIPPED_ANNOTATIONS.some((key) => Object.hasOwn(meta.annotations!, key))) obj.metadata.annotations = without(meta.annotations, STRIPPED_ANNOTATIONS);
}

// original-name/-namespace are labels, so a value over 63 characters would fail the write (upstream
// wrote it anyway and the copy was never made); the source annotation carries the identity either way.
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
export function isLabelValue(v: string): boolean {
  return v.length <= 63 && LABEL_VALUE.test(v);
}

/**
 * The desired local copy of `source`. Throws RuleError (with the override's location) when an
 * override cannot be rendered or applied or its template clusters are missing.
 */
export function buildDesiredCopy(source: KubeObject, m: CombinedMutations, ctx: MutationContext): KubeObject {
  return runThrough(buildingDesiredCopy(source, m, ctx));
}

/**
 * buildDesiredCopy, pausing before each costly part of a rule with overrides: before the deep
 * copy and the template data (each the size of the object), before each template, and before the
 * patch.
 */
export function* buildingDesiredCopy(source: KubeObject, m: CombinedMutations, ctx: MutationContext): Pausable<KubeObject> {
  if (m.overrides.length > 0) yield;
  // 1. deep copy
  const obj = cloneJSON(source);
  const meta = (obj.metadata ??= {});
  const sourceGVK = gvkOf(source);
  const sourceName = source.metadata?.name ?? '';
  const sourceNamespace = source.metadata?.namespace ?? '';
  const sourceOwner = source.metadata?.annotations?.[ANNOTATIONS.ownership] ?? '';

  // 2. annotation and label mutations
  meta.annotations = applyKeyChanges(meta.annotations, m.annotations);
  meta.labels = applyKeyChanges(meta.labels, m.labels);

  // 3. ownership: keep a transitive owner, else the peer we read it from owns it (or the cluster
  // a registry entry describes)
  const fallbackOwner = sourceOwner === '' && ctx.relaysRegistry ? ownerOfUnclaimed(source, ctx) : ctx.syncedFromClusterID;
  if (!meta.annotations[ANNOTATIONS.ownership]) meta.annotations[ANNOTATIONS.ownership] = fallbackOwner;
  if (!meta.labels[LABELS.ownership]) meta.labels[LABELS.ownership] = fallbackOwner;

  // 4. GVK mutation
  if (m.groupVersionKind) {
    meta.annotations[ANNOTATIONS.originalGVK] = formatOriginalGVK(sourceGVK);
    const target = targetGVK(sourceGVK, m);
    obj.apiVersion = formatApiVersion(target);
    obj.kind = target.kind;
  }

  // 5, 6. strip apply history and server-set metadata
  stripSourceMetadata(obj);

  // 7. overrides
  const desired = m.overrides.length > 0 ? yield* applyOverrides(obj, sourceGVK, m.overrides, clustersFor(sourceOwner, ctx)) : obj;

  // 8. rename tracking, plus our full source identity
  const dmeta = (desired.metadata ??= {});
  // Ours: what marks this cluster's own bookkeeping (a hub sync's, a disabled Cluster) is never
  // a rule's to write, not even through an override.
  if (dmeta.annotations) for (const key of STRIPPED_ANNOTATIONS) if (key.startsWith(OUR_KEY_PREFIX)) delete dmeta.annotations[key];
  // Ours: a copy is found again by its name; one the API server names would be made anew at every
  // change of its source, and kept for ever while that source still matches.
  if (dmeta.generateName !== undefined) throw new RuleError([{ path: 'mutations.overrides', message: 'a copy is never written with metadata.generateName: it needs a name of its own' }]);
  if (typeof dmeta.name !== 'string' || dmeta.name === '') throw new RuleError([{ path: 'mutations.overrides', message: 'the copy has no metadata.name' }]);
  const labels = (dmeta.labels ??= {});
  if ((dmeta.name ?? '') !== sourceName && isLabelValue(sourceName)) labels[LABELS.originalName] = sourceName;
  if ((dmeta.namespace ?? '') !== sourceNamespace && isLabelValue(sourceNamespace)) labels[LABELS.originalNamespace] = sourceNamespace;
  (dmeta.annotations ??= {})[ANNOTATIONS.source] = formatSourceIdentity({
    clusterID: ctx.syncedFromClusterID,
    group: sourceGVK.group,
    kind: sourceGVK.kind,
    namespace: sourceNamespace,
    name: sourceName,
    ...(ctx.rule ? { rule: ctx.rule } : {}),
  });

  return !m.syncStatus && desired.status !== undefined ? without(desired, ['status']) : desired;
}

/**
 * The owner of a copy of a registry entry that names none: the peer it is read from, except for
 * another cluster's entry (its Cluster, or the credentials Secret our Cluster of it names), which
 * is passed on for the cluster it describes. A peer holds such an entry as its own when it was
 * placed there by hand, as the quickstart's swap does, and upstream's controller never marks it
 * otherwise: owned by the peer, the entry could never reach the others. This gives a peer nothing
 * it could not take by writing that owner into the entry itself.
 */
function ownerOfUnclaimed(source: KubeObject, ctx: MutationContext): string {
  const g = gvkOf(source);
  if (g.group === API_GROUP && g.kind === KINDS.cluster) return (source as Cluster).spec?.clusterID || ctx.syncedFromClusterID;
  if (isSecret(source) && source['type'] === CLUSTER_SECRET.type) {
    const namers = ctx.clusters.filter((c) => namesCredentials(c, source.metadata ?? {}));
    if (namers.length === 1 && namers[0]?.spec?.clusterID) return namers[0].spec.clusterID;
  }
  return ctx.syncedFromClusterID;
}

/** `.Cluster` is the owner's Cluster CR (transitive owner if any), `.LocalCluster` ours. */
function clustersFor(sourceOwner: string, ctx: MutationContext): { cluster: Cluster; localCluster: Cluster } {
  const byID = (id: string): Cluster | undefined => ctx.clusters.find((c) => c.spec.clusterID === id);
  const localCluster = byID(ctx.localClusterID);
  if (!localCluster) throw new RuleError([{ path: 'mutations.overrides', message: 'could not find local cluster by id' }]);
  const cluster = byID(sourceOwner || ctx.syncedFromClusterID);
  if (!cluster) throw new RuleError([{ path: 'mutations.overrides', message: 'could not find synced cluster by id' }]);
  return { cluster, localCluster };
}

function* applyOverrides(
  obj: KubeObject,
  sourceGVK: FullGVK,
  overrides: readonly LocatedOverride[],
  clusters: { cluster: Cluster; localCluster: Cluster },
): Pausable<KubeObject> {
  // The source kind's Go type, as upstream's templates see it (typed when its scheme knows it).
  let data: ReturnType<typeof templateData>;
  try {
    data = templateData({ object: obj, objectGVK: sourceGVK, ...clusters });
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    throw new RuleError([{ path: 'mutations.overrides', message: `template data: ${err.message}` }]);
  }
  // Every value is rendered against the object before any op is applied, as upstream does.
  // One object's overrides draw on one budget: a rule's many templates cost no more than a few.
  const budget = new Budget();
  const ops: { op: Op; at: string }[] = [];
  for (const { override, at } of overrides) {
    // A template may take up to a whole execution's steps: whoever drives this may pause first.
    if (override.type === OVERRIDE_TYPES.replace) yield;
    ops.push({ op: overrideOp(override, at, data, budget), at });
  }
  yield;
  // One op at a time (same result as go-patch's in-order apply) so a failure names its override.
  let doc: unknown = obj;
  const { apiVersion, kind } = obj;
  for (const { op, at } of ops) {
    try {
      doc = applyOps(doc, [op]);
    } catch (err) {
      throw new RuleError([{ path: at, message: `could not apply patch op: ${errorMessage(err)}` }]);
    }
    // What a rule writes is known before any object arrives (it is checked, watched and collected
    // by kind): only mutations.groupVersionKind may change it. Upstream let an override do so.
    const patched = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as Partial<KubeObject>) : undefined;
    if (patched && (patched.apiVersion !== apiVersion || patched.kind !== kind)) {
      throw new RuleError([{ path: at, message: 'an override may not change apiVersion or kind (mutations.groupVersionKind does)' }]);
    }
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new RuleError([{ path: 'mutations.overrides', message: 'patched object is not a map' }]);
  }
  return doc as KubeObject;
}

const MAX_PARSED_BYTES = 256 << 10;
const MAX_PARSED = '256 KiB';

function overrideOp(o: Override, at: string, data: ReturnType<typeof templateData>, budget: Budget): Op {
  const path = o.path ?? '';
  if (o.type === OVERRIDE_TYPES.remove) return { type: 'remove', path };
  if (o.type !== OVERRIDE_TYPES.replace) {
    throw new RuleError([{ path: `${at}.type`, message: `unsupported override type ${JSON.stringify(o.type ?? '')}` }]);
  }
  let rendered: string;
  try {
    rendered = renderTemplate(o.value ?? '', data, '', budget);
  } catch (err) {
    throw new RuleError([{ path: `${at}.value`, message: errorMessage(err) }]);
  }
  if (!o.parseValue) return { type: 'replace', path, value: rendered };
  // The rendered text may carry a peer's data, and parsing it costs far more than rendering it.
  if (Buffer.byteLength(rendered, 'utf8') > MAX_PARSED_BYTES) {
    throw new RuleError([{ path: `${at}.value`, message: `could not unmarshal value: the rendered value is larger than ${MAX_PARSED}` }]);
  }
  try {
    // gopkg.in/yaml.v2 semantics: YAML 1.1 scalars (yes/no, 0777), empty text is null, the last of
    // duplicate keys wins (the package's own check for them is quadratic). Unlike yaml.v2, aliases
    // are refused: the package resolves them in time that grows faster than the square of the
    // text. Warnings would go to stderr, past our log's redaction.
    return { type: 'replace', path, value: parseYAML(rendered, { version: '1.1', uniqueKeys: false, maxAliasCount: 0, logLevel: 'error' }) as unknown };
  } catch (err) {
    throw new RuleError([{ path: `${at}.value`, message: `could not unmarshal value: ${errorMessage(err)}` }]);
  }
}
