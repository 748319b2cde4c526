// Pure-core throughput, ours against the raw limit in the same run: the Go-template engine
// rendering the upstream override example versus the same string built by hand-written
// TypeScript, and a compiled rule matching objects versus a hand-written predicate for the
// same rule.
import { createHash } from 'node:crypto';
import type { Cluster, KubeObject, ResourceSyncRuleSpec } from '../src/core/api/types.ts';
import { compileRule } from '../src/core/rules/index.ts';
import { parseTemplate, renderTemplate, templateData } from '../src/go/template/index.ts';
import type { BenchResult } from './informer.bench.ts';

const TEMPLATE = '{{ printf "%s-%s-%s" .Object.GetName .Cluster.GetName (trunc 4 (sha256sum .Cluster.GetName))}}';
const RUN_MS = 1500;

/** Operations per second of `fn`, over about RUN_MS after a warm-up. */
function opsPerSecond(fn: (i: number) => unknown): number {
  for (let i = 0; i < 2000; i++) fn(i);
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < RUN_MS) {
    for (let k = 0; k < 200; k++) fn(n++);
    now = performance.now();
  }
  return (n * 1000) / (now - start);
}

function result(name: string, ours: number, baseline: number, note: string): BenchResult {
  return { name, ours: Math.round(ours), baseline: Math.round(baseline), unit: 'ops/s', ratio: ours / baseline, note };
}

export async function run(): Promise<BenchResult[]> {
  const objects: KubeObject[] = Array.from({ length: 1000 }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${i}`, namespace: i % 3 === 0 ? 'prod' : 'dev', labels: { app: i % 2 ? 'web' : 'db', tier: 'a' }, annotations: { team: `t${i % 7}` } },
    spec: { type: i % 5 ? 'ClusterIP' : 'NodePort', ports: [{ port: 80 + (i % 10) }] },
  }));
  const cluster: Cluster = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name: 'demo-cluster-1' }, spec: { clusterID: 'id-1' } };
  const data = objects.map((object) => templateData({ object, cluster, localCluster: cluster }));

  const handWritten = (i: number): string => {
    const o = objects[i % objects.length];
    const c = cluster.metadata.name ?? '';
    return `${o?.metadata.name ?? ''}-${c}-${createHash('sha256').update(c).digest('hex').slice(0, 4)}`;
  };
  const parsed = parseTemplate(TEMPLATE);
  const renderExec = opsPerSecond((i) => parsed.execute(data[i % data.length]));
  const renderFull = opsPerSecond((i) => renderTemplate(TEMPLATE, data[i % data.length]));
  const renderRaw = opsPerSecond(handWritten);

  const spec: ResourceSyncRuleSpec = {
    groupVersionKind: { version: 'v1', kind: 'Service' },
    rules: [
      {
        match: [
          {
            namespaces: ['prod', 'dev'],
            labels: [{ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] }],
            annotations: [{ matchExpressions: [{ key: 'team', operator: 'Exists' }] }],
            content: [{ key: 'spec.type', value: 'ClusterIP' }],
          },
        ],
      },
    ],
  };
  const rule = compileRule(spec);
  const predicate = (o: KubeObject): boolean => {
    const labels = o.metadata.labels ?? {};
    return (
      o.apiVersion === 'v1' &&
      o.kind === 'Service' &&
      ['prod', 'dev'].includes(o.metadata.namespace ?? '') &&
      labels['app'] === 'web' &&
      ['a', 'b'].includes(labels['tier'] ?? '') &&
      'team' in (o.metadata.annotations ?? {}) &&
      (o['spec'] as { type?: string }).type === 'ClusterIP'
    );
  };
  // Both must agree, or the comparison means nothing.
  for (const o of objects) if (rule.match(o).matched !== predicate(o)) throw new Error(`rule and predicate disagree on ${o.metadata.name ?? ''}`);
  const matchOurs = opsPerSecond((i) => rule.match(objects[i % objects.length] as KubeObject));
  const matchRaw = opsPerSecond((i) => predicate(objects[i % objects.length] as KubeObject));

  return [
    result('template render (parsed once)', renderExec, renderRaw, 'upstream override example vs hand-written TypeScript'),
    result('template render (renderTemplate)', renderFull, renderRaw, 'as the mutation path calls it: parse cached per source'),
    result('rule match (compiled rule)', matchOurs, matchRaw, 'namespaces + labels + annotations + gjson content vs hand-written predicate'),
  ];
}
