// What the dashboard asks when a page wants a trace, as a seam: the command gives one that reads
// the peers as `trace` does; without one (--no-trace) the dashboard offers none and never reads a
// peer's credentials.
import type { Cluster, ResourceSyncRule } from '../../core/api/types.ts';
import type { ObjectReader } from '../../kube/index.ts';
import { ruleObjects, type RuleObjects } from '../rule-objects.ts';
import type { Trace } from '../trace-rows.ts';
import { Tracer, type TraceTarget } from '../trace.ts';

export interface GroupTracer {
  /** The objects of the dashboard's cluster that `rule` concerns: those a trace may be asked of. */
  objectsOf(rule: ResourceSyncRule, clusters: readonly Cluster[], signal: AbortSignal): Promise<RuleObjects>;
  /** One object of the dashboard's cluster traced across the group. */
  trace(target: TraceTarget, signal: AbortSignal): Promise<Trace>;
}

/** The group read from the cluster `rest` reads, with the credentials its controller holds in `namespace` for its peers. */
export function peerTracer(rest: ObjectReader, o: { network: string; namespace: string }): GroupTracer {
  return {
    objectsOf: (rule, clusters, signal) => ruleObjects(rest, rule, { namespace: o.namespace, clusters, signal }),
    trace: (target, signal) => new Tracer(rest, { ...o, signal }).trace(target),
  };
}
