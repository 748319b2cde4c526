// A raw relay, the floor of any sync that watches one cluster and writes to another, run as its own
// process as a controller is: it watches new ConfigMaps in a namespace of the source cluster and
// creates a plain copy of each in that namespace of the target, a fixed number at a time, with no
// decision, record or retry. With --as-ours its copies carry as much metadata as ours do (two
// labels, three annotations of the same sizes, under keys no controller reads, written under our
// field manager's name) and it watches them as our copies informer does: what the API servers do
// for our copies, without our controller.
// Usage: node bench/relay.ts <source kubeconfig> <target kubeconfig> <namespace> <workers> [--as-ours]
// It says "ready" on stdout once its watches are open, and runs until it is killed.
import { formatSourceIdentity } from '../src/core/api/index.ts';
import { ClusterConfig, RestClient, type KubeObject } from '../src/kube/index.ts';
import { CM, watchNamespace } from './support.ts';

const [sourceConfig = '', targetConfig = '', namespace = '', workers = '16'] = process.argv.slice(2);
const asOurs = process.argv.includes('--as-ours');
const source = new RestClient(await ClusterConfig.fromFile(sourceConfig).connection());
const target = new RestClient(await ClusterConfig.fromFile(targetConfig).connection());

/** Keys as long as our marks' (`cluster-registry.k8s.cisco.com/...`), values shaped as theirs. */
const OWNER_KEY = 'cluster-registry.bench.example.com/relay-owner-cluster-id';
const OWNER = '00000000-0000-4000-8000-000000000001';
function metadataAsOurs(name: string): Pick<KubeObject['metadata'], 'labels' | 'annotations'> {
  return {
    labels: { [OWNER_KEY]: OWNER },
    annotations: {
      [OWNER_KEY]: OWNER,
      'cluster-registry.bench.example.com/relay-source': formatSourceIdentity({ clusterID: OWNER, group: '', kind: 'ConfigMap', namespace, name, rule: 'bench-sink' }),
      'cluster-registry.bench.example.com/relay-sync-record': JSON.stringify({ hash: '0'.repeat(32), cluster: OWNER, sourceVersion: '1000000', ruleGeneration: 1 }),
    },
  };
}

const queue: KubeObject[] = [];
const idle: (() => void)[] = [];
await watchNamespace(source, namespace, (type, obj) => {
  if (type !== 'ADDED') return;
  queue.push(obj);
  idle.shift()?.();
});
if (asOurs) await watchNamespace(target, namespace, () => undefined);
process.stdout.write('ready\n');

await Promise.all(
  Array.from({ length: Number(workers) }, async () => {
    for (;;) {
      const obj = queue.shift();
      if (!obj) {
        await new Promise<void>((wake) => idle.push(wake));
        continue;
      }
      const name = obj.metadata.name ?? '';
      const mark = asOurs ? metadataAsOurs(name) : {};
      const copy = { apiVersion: 'v1', kind: 'ConfigMap', data: obj.data, metadata: { name, namespace, ...mark, labels: { ...obj.metadata.labels, ...mark.labels } } };
      // A copy that fails is left out: the benchmark then waits for it and fails, which is what it should.
      await target.create(CM, namespace, copy, asOurs ? { fieldManager: 'cluster-registry-sync' } : {}).catch((err: unknown) => process.stderr.write(`relay: ${name}: ${String(err)}\n`));
    }
  }),
);
