// A raw relay, the ceiling of any sync that watches one cluster and writes to another, run as its
// own process as a controller is: it watches new ConfigMaps in a namespace of the source cluster and
// creates a plain copy of each in that namespace of the target, a fixed number at a time, with no
// decision, record or retry. With --as-ours it also does what makes the API servers work for our
// copies: its copies carry as much metadata as ours do (two labels, three annotations of the same
// sizes, under keys no controller reads, written under our field manager's name), it watches them
// as our copies informer does, and it watches the namespace on the group's other peer leaving
// copies out, as our peer informers do (that API server filters each copy's event for it). With
// --upstream-marks it does the same, but its copies carry only upstream's ownership marks (the
// label and the annotation), not our source and sync-record annotations.
// Usage: node bench/relay.ts <source kubeconfig> <target kubeconfig> <namespace> <workers> [--as-ours|--upstream-marks <other peer's kubeconfig>]
// It says "ready" on stdout once its watches are open, runs until it is killed, and exits non-zero
// as soon as a copy or a watch fails, so that the benchmark does not wait for what will never come.
import { formatSourceIdentity } from '../src/core/api/index.ts';
import { FIELD_MANAGER } from '../src/core/rules/index.ts';
import type { KubeObject } from '../src/kube/index.ts';
import { kubeconfigClient } from '../src/testbed/group.ts';
import { CM, watchNamespace } from './support.ts';

const [sourceConfig = '', targetConfig = '', namespace = '', workerArg = '', mode, otherPeerConfig = ''] = process.argv.slice(2);
const workers = Number(workerArg);
/** Whether the copies carry our marks (and the relay makes our watches), and which. */
const marks = mode === '--as-ours' ? 'ours' : mode === '--upstream-marks' ? 'upstream' : undefined;
if (!(Number.isInteger(workers) && workers > 0) || (mode !== undefined && !(marks && otherPeerConfig))) {
  process.stderr.write('usage: node bench/relay.ts <source kubeconfig> <target kubeconfig> <namespace> <workers> [--as-ours|--upstream-marks <other peer kubeconfig>]\n');
  process.exit(2);
}
const source = await kubeconfigClient(sourceConfig);
const target = await kubeconfigClient(targetConfig);

function fail(why: string): never {
  process.stderr.write(`relay: ${why}\n`);
  process.exit(1);
}
const said = (err: unknown): string => (err instanceof Error ? err.message : JSON.stringify(err));
const watchEnded = (what: string) => (err: unknown) => fail(`the watch of ${what} ended${err ? `: ${said(err)}` : ''}`);

/** Keys as long as our marks' (`cluster-registry.k8s.cisco.com/...`), values shaped as theirs. */
const OWNER_KEY = 'cluster-registry.bench.example.com/relay-owner-cluster-id';
const OWNER = '00000000-0000-4000-8000-000000000001';
function marked(name: string): Pick<KubeObject['metadata'], 'labels' | 'annotations'> {
  if (!marks) return {};
  const ownership = { labels: { [OWNER_KEY]: OWNER }, annotations: { [OWNER_KEY]: OWNER } };
  if (marks === 'upstream') return ownership;
  return {
    labels: ownership.labels,
    annotations: {
      ...ownership.annotations,
      'cluster-registry.bench.example.com/relay-source': formatSourceIdentity({ clusterID: OWNER, group: '', kind: 'ConfigMap', namespace, name, rule: 'bench-sink' }),
      'cluster-registry.bench.example.com/relay-sync-record': JSON.stringify({ hash: '0'.repeat(32), cluster: OWNER, sourceVersion: '1000000', ruleGeneration: 1 }),
    },
  };
}

const queue: KubeObject[] = [];
const idle: (() => void)[] = [];
await watchNamespace(
  source,
  namespace,
  (type, obj) => {
    if (type !== 'ADDED') return;
    queue.push(obj);
    idle.shift()?.();
  },
  { onEnd: watchEnded('the sources') },
);
if (marks) {
  await watchNamespace(target, namespace, () => undefined, { onEnd: watchEnded('the copies') });
  await watchNamespace(await kubeconfigClient(otherPeerConfig), namespace, () => undefined, { labelSelector: `${OWNER_KEY} notin (${OWNER})`, onEnd: watchEnded("the other peer's objects") });
}
process.stdout.write('ready\n');

await Promise.all(
  Array.from({ length: workers }, async () => {
    for (;;) {
      const obj = queue.shift();
      if (!obj) {
        await new Promise<void>((wake) => idle.push(wake));
        continue;
      }
      const name = obj.metadata.name ?? '';
      const mark = marked(name);
      const copy = { apiVersion: 'v1', kind: 'ConfigMap', data: obj.data, metadata: { name, namespace, ...mark, labels: { ...obj.metadata.labels, ...mark.labels } } };
      await target.create(CM, namespace, copy, marks ? { fieldManager: FIELD_MANAGER } : {}).catch((err: unknown) => fail(`${name}: ${said(err)}`));
    }
  }),
);
