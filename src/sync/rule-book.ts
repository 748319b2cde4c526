// The rules the engine runs: every ResourceSyncRule of the local cluster (each member runs its own
// copy of a rule against each of its peers), recompiled when a spec changes, plus the built-in
// rules that no one can edit or delete.
import type { ResourceSyncRule, ResourceSyncRuleSpec } from '../core/api/types.ts';
import { BUILTIN_PREFIX, builtinRules, fingerprint, ruleState, type RuleState } from '../core/rules/index.ts';
import type { Informer } from '../kube/index.ts';

export type RuleListener = (name: string, state: RuleState | undefined) => void;

/** The rules as the local ResourceSyncRule cache has them, recompiled when a spec changes. */
export class RuleBook {
  private readonly rules = new Map<string, RuleState>();
  private readonly listeners = new Set<RuleListener>();
  private readonly informer: Informer<ResourceSyncRule>;
  private readonly namespace: string;

  /** `namespace` is the controller namespace. */
  constructor(informer: Informer<ResourceSyncRule>, namespace: string) {
    this.informer = informer;
    this.namespace = namespace;
    const builtins = builtinRules(namespace);
    for (const b of builtins) this.rules.set(b.name, b);
  }

  get(name: string): RuleState | undefined {
    return this.rules.get(name);
  }

  all(): RuleState[] {
    return [...this.rules.values()];
  }

  /** Calls `listener` for every current rule and every later change; returns the unsubscribe. */
  subscribe(listener: RuleListener): () => void {
    this.listeners.add(listener);
    for (const r of this.rules.values()) listener(r.name, r);
    return () => this.listeners.delete(listener);
  }

  /** Follows the ResourceSyncRule cache until the returned unsubscribe is called. */
  start(): () => void {
    return this.informer.addEventHandler({
      onAdd: (o) => this.put(o),
      onUpdate: (_old, o) => this.put(o),
      onDelete: (o) => this.remove(o.metadata.name ?? ''),
    });
  }

  private put(obj: ResourceSyncRule): void {
    const name = obj.metadata.name ?? '';
    const prev = this.rules.get(name);
    // Metadata and status changes keep the compiled rule; only the object reference moves on.
    // A rule object without a spec is reported as invalid like any other bad rule.
    const spec = obj.spec ?? ({} as ResourceSyncRuleSpec);
    const next = prev && !prev.ignoresFeatures && fingerprint(spec, false) === prev.fingerprint ? { ...prev, object: obj } : ruleState(name, spec, obj, this.namespace);
    this.rules.set(name, next);
    if (next.fingerprint !== prev?.fingerprint || next.object?.metadata.uid !== prev.object?.metadata.uid) this.emit(name, next);
  }

  private remove(name: string): void {
    if (name.startsWith(BUILTIN_PREFIX) || !this.rules.delete(name)) return;
    this.emit(name, undefined);
  }

  private emit(name: string, state: RuleState | undefined): void {
    for (const l of this.listeners) l(name, state);
  }
}

