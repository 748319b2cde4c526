// The objects of one cluster a ResourceSyncRule concerns, for the dashboard to pick one to trace:
// the copies the rule made there and the objects there it takes (which every member running the
// same rule copies from it). Read where the rule reads and writes: its source kind in the
// namespaces its matches name, its target kinds by the ownership label, each list bounded.
import { gvkKey, LABELS, sourceIdentityOf, type FullGVK } from '../core/api/index.ts';
import type { Cluster, KubeObject, ResourceSyncRule } from '../core/api/types.ts';
import { errorMessage, formatIssue, ruleObjectRole, ruleState, sourceScope, targetNamespaces, type RuleObjectRole } from '../core/rules/index.ts';
import { speakerFor } from '../core/trust/index.ts';
import { Discovery, NoKindMatchError, type ApiResource, type ObjectReader } from '../kube/index.ts';
import { kubeSystemUID } from '../peers/identity.ts';
import { call } from './peer-access.ts';

export interface RuleObject {
  /** The kind as `trace` takes it: `Kind`, or `Kind.group` outside the core group. */
  readonly kind: string;
  /** '' when cluster-scoped. */
  readonly namespace: string;
  readonly name: string;
  readonly role: RuleObjectRole;
  /** Of a copy: the member it was copied from, as this cluster's registry names it (its ID when none does). */
  readonly from?: string;
}

export interface RuleObjects {
  readonly rule: string;
  /** Sources first, then copies, each by namespace and name. */
  readonly objects: RuleObject[];
  /** What was not looked at, and why. */
  readonly notes: string[];
}

/** How many objects are listed: a picker, not an inventory. */
export const MAX_RULE_OBJECTS = 200;
/** What one list may bring back. */
export const MAX_LISTED = 500;

/** `rule`'s objects on the cluster `reader` reads; `namespace` is the controller's, `clusters` the registry there. */
export async function ruleObjects(reader: ObjectReader, rule: ResourceSyncRule, o: { namespace: string; clusters: readonly Cluster[]; signal?: AbortSignal }): Promise<RuleObjects> {
  const name = rule.metadata.name ?? '';
  const state = ruleState(name, rule.spec, rule, o.namespace);
  if (!state.compiled) return { rule: name, objects: [], notes: [`the rule is invalid: ${state.issues.map(formatIssue).join('; ')}`] };
  const localID = await kubeSystemUID(reader, o.signal);
  const discovery = new Discovery(reader);
  const notes: string[] = [];
  const found = new Map<string, RuleObject>();
  const served = async (gvk: FullGVK): Promise<ApiResource | undefined> => {
    try {
      return await discovery.resourceFor(gvk);
    } catch (err) {
      if (!(err instanceof NoKindMatchError)) throw err;
      notes.push(`${gvkKey(gvk)} is not served here`);
      return undefined;
    }
  };
  const look = async (resource: ApiResource, namespaces: readonly string[] | undefined, selectors: { labelSelector?: string; fieldSelector?: string }): Promise<void> => {
    for (const ns of resource.namespaced && namespaces ? namespaces : [undefined]) {
      const where = `${resource.resource}${ns ? ` in ${ns}` : ''}`;
      try {
        const list = await reader.list(resource, { ...call(o.signal), ...(ns ? { namespace: ns } : {}), ...selectors, limit: MAX_LISTED });
        if (list.metadata?.continue) notes.push(`more than ${MAX_LISTED} ${where}: the first ${MAX_LISTED} were looked at`);
        for (const item of list.items.slice(0, MAX_LISTED)) {
          const role = ruleObjectRole(state, item, localID);
          if (role) found.set(`${resource.group}/${resource.kind}/${item.metadata.namespace ?? ''}/${item.metadata.name ?? ''}`, entry(resource, item, role, o.clusters));
        }
      } catch (err) {
        notes.push(`${where} could not be listed: ${errorMessage(err)}`);
      }
    }
  };
  const source = await served(state.sourceGVK);
  const scope = sourceScope(state.spec, source?.namespaced ?? true);
  if (source) await look(source, scope.namespaces, scope.fieldSelector ? { fieldSelector: scope.fieldSelector } : {});
  // Copies of its own kind, which trace can follow to their source (copies made into another kind it cannot).
  if (source) await look(source, targetNamespaces(state.spec, scope), { labelSelector: LABELS.ownership });
  const order = (r: RuleObject) => `${r.role === 'source' ? 0 : 1}/${r.namespace}/${r.name}/${r.kind}`;
  const objects = [...found.values()].sort((a, b) => order(a).localeCompare(order(b)));
  if (objects.length > MAX_RULE_OBJECTS) notes.push(`${objects.length} objects: the first ${MAX_RULE_OBJECTS} are listed`);
  return { rule: name, objects: objects.slice(0, MAX_RULE_OBJECTS), notes };
}

/** A kind as `trace` takes it, and as the dashboard asks for it. */
export const traceKind = (g: { readonly group?: string; readonly kind: string }): string => (g.group ? `${g.kind}.${g.group}` : g.kind);

function entry(resource: ApiResource, o: KubeObject, role: RuleObjectRole, clusters: readonly Cluster[]): RuleObject {
  const from = role === 'copy' ? readFrom(o, clusters) : undefined;
  return { kind: traceKind(resource), namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '', role, ...(from ? { from } : {}) };
}

/** The member a copy was read from, by the name this cluster's registry gives it. */
function readFrom(o: KubeObject, clusters: readonly Cluster[]): string | undefined {
  const id = sourceIdentityOf(o)?.clusterID;
  return id ? (speakerFor(clusters, id)?.metadata.name ?? id) : undefined;
}
