// Informer benchmark, ours against a baseline in the same run:
//  - initial sync of 10,000 ConfigMaps: Informer start → synced, versus a plain paged LIST
//    (limit 500) of the same objects, in time and in heap retained by the result;
//  - watch throughput: the same recorded watch stream (10,000 ADDED events captured from the
//    apiserver) served from a local HTTP server, consumed by an Informer versus a raw
//    http.get + split + JSON.parse loop. This isolates client-side cost from the apiserver.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { ClusterConfig } from '../src/kube/config.ts';
import { Informer } from '../src/kube/informer.ts';
import { RestClient } from '../src/kube/rest.ts';
import type { KubeObject } from '../src/kube/types.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { CM, median } from './support.ts';

export interface BenchResult {
  name: string;
  ours: number;
  baseline: number;
  unit: string;
  ratio: number;
  note?: string;
}

const OBJECTS = 10_000;
const ROUNDS = 3;
const NS = 'bench';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function createObjects(rest: RestClient): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < OBJECTS) {
        const i = next++;
        await rest.create(CM, NS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { app: `a${i % 10}` } }, data: { index: String(i), payload: 'x'.repeat(200) } });
      }
    }),
  );
}

/** A watch from `rv` until `count` ADDED events arrived, recorded as newline-delimited JSON. */
async function captureWatch(rest: RestClient, rv: string, count: number, whileRunning: () => Promise<void>): Promise<Buffer> {
  const ac = new AbortController();
  const chunks: Buffer[] = [];
  const stream = await rest.watch(CM, { namespace: NS, resourceVersion: rv, signal: ac.signal });
  const recording = (async () => {
    let seen = 0;
    for await (const ev of stream) {
      chunks.push(Buffer.from(`${JSON.stringify(ev)}\n`));
      if (ev.type === 'ADDED' && ++seen === count) break;
    }
    return seen;
  })();
  await whileRunning();
  const seen = await recording;
  ac.abort();
  // A watch may end early (the server's choice, or a GOAWAY): the replay would then measure fewer events.
  if (seen < count) throw new Error(`the recorded watch ended after ${seen} of ${count} ADDED events`);
  return Buffer.concat(chunks);
}

/** Serves an empty list at `rv` and then the recorded stream once; later watches hang. */
async function replayServer(rv: string, stream: Buffer): Promise<{ url: string; close(): void }> {
  let served = false;
  const server = http.createServer((req, res) => {
    const watch = new URL(req.url!, 'http://x').searchParams.get('watch');
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (!watch) res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: rv }, items: [] }));
    else if (!served) {
      served = true;
      res.end(stream);
    } else res.flushHeaders();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

function rawConsume(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}/api/v1/namespaces/${NS}/configmaps?watch=1`, (res) => {
        res.setEncoding('utf8');
        let buf = '';
        let n = 0;
        res.on('data', (c: string) => {
          buf += c;
          let start = 0;
          let nl: number;
          while ((nl = buf.indexOf('\n', start)) >= 0) {
            // Touch a field so the parse cannot be skipped.
            if ((JSON.parse(buf.slice(start, nl)) as { object: KubeObject }).object.metadata.name) n++;
            start = nl + 1;
          }
          buf = buf.slice(start);
        });
        res.on('end', () => resolve(n));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function informerConsume(url: string, lastRv: string, freeze: boolean): Promise<void> {
  const rest = new RestClient({ server: new URL(url), tls: {}, authHeaders: async () => ({}), invalidate: () => undefined });
  const ac = new AbortController();
  const inf = new Informer({ rest, resource: CM, namespace: NS, freeze });
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  inf.addEventHandler({
    onAdd: (o) => {
      if (o.metadata.resourceVersion === lastRv) resolveDone();
    },
  });
  const running = inf.start(ac.signal);
  await done;
  ac.abort();
  await running;
  rest.close();
}

// Each measurement runs in its own function so nothing of it outlives the call: heap deltas of
// one run are not polluted by the previous one.
async function measureList(rest: RestClient): Promise<{ ms: number; heap: number }> {
  const before = heapAfterGc();
  const { ms, value } = await timed(() => rest.listAll(CM, { namespace: NS, limit: 500 }));
  const heap = heapAfterGc() - before;
  if (value.items.length !== OBJECTS) throw new Error(`listed ${value.items.length} objects`);
  return { ms, heap };
}

async function measureInformer(rest: RestClient): Promise<{ ms: number; heap: number }> {
  const before = heapAfterGc();
  const ac = new AbortController();
  const inf = new Informer({ rest, resource: CM, namespace: NS });
  const t0 = performance.now();
  const running = inf.start(ac.signal);
  await inf.waitForSync();
  const ms = performance.now() - t0;
  const heap = heapAfterGc() - before;
  if (inf.store.size !== OBJECTS) throw new Error(`cached ${inf.store.size} objects`);
  ac.abort();
  await running;
  return { ms, heap };
}

export async function run(): Promise<BenchResult[]> {
  const sandbox = await startSandbox({ clusters: 1, controllerManager: false });
  const results: BenchResult[] = [];
  try {
    const rest = await RestClient.fromConfig(ClusterConfig.fromString(sandbox.clusters[0]!.kubeconfig), { timeoutMs: 60_000 });
    await rest.create({ group: '', version: 'v1', resource: 'namespaces' }, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const rv0 = (await rest.list(CM, { namespace: NS, limit: 1 })).metadata.resourceVersion!;
    const recorded = await captureWatch(rest, rv0, OBJECTS, () => createObjects(rest));
    const lines = recorded.toString('utf8').trimEnd().split('\n');
    const lastRv = (JSON.parse(lines.at(-1)!) as { object: KubeObject }).object.metadata.resourceVersion!;

    // Initial sync: alternate ours and the baseline so both see the same server state.
    const syncOurs: number[] = [];
    const syncBase: number[] = [];
    const heapOurs: number[] = [];
    const heapBase: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const base = await measureList(rest);
      syncBase.push(base.ms);
      heapBase.push(base.heap);
      const ours = await measureInformer(rest);
      syncOurs.push(ours.ms);
      heapOurs.push(ours.heap);
    }
    const mb = (b: number): number => Math.round((b / 1024 / 1024) * 10) / 10;
    results.push({ name: `initial sync of ${OBJECTS} ConfigMaps`, ours: Math.round(median(syncOurs)), baseline: Math.round(median(syncBase)), unit: 'ms', ratio: 0, note: `median of ${ROUNDS}; baseline: paged LIST (limit 500)` });
    results.push({ name: `heap retained after sync of ${OBJECTS} ConfigMaps`, ours: mb(median(heapOurs)), baseline: mb(median(heapBase)), unit: 'MB', ratio: 0, note: 'store (frozen objects + index) vs list items array' });

    // Watch throughput on the same recorded stream.
    const tpOurs: number[] = [];
    const tpUnfrozen: number[] = [];
    const tpBase: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      {
        const srv = await replayServer(rv0, recorded);
        const { ms, value } = await timed(() => rawConsume(srv.url));
        srv.close();
        tpBase.push((value / ms) * 1000);
      }
      for (const [freeze, into] of [[true, tpOurs], [false, tpUnfrozen]] as const) {
        const srv = await replayServer(rv0, recorded);
        const { ms } = await timed(() => informerConsume(srv.url, lastRv, freeze));
        srv.close();
        into.push((lines.length / ms) * 1000);
      }
    }
    results.push({ name: `watch throughput, ${lines.length} events`, ours: Math.round(median(tpOurs)), baseline: Math.round(median(tpBase)), unit: 'events/s', ratio: 0, note: `median of ${ROUNDS}; higher is better; baseline: http.get + split + JSON.parse` });
    results.push({ name: `watch throughput, ${lines.length} events, cache not frozen`, ours: Math.round(median(tpUnfrozen)), baseline: Math.round(median(tpBase)), unit: 'events/s', ratio: 0, note: 'Informer({ freeze: false }): the cost of deep-freezing cached objects' });
    rest.close();
  } finally {
    await sandbox.stop();
  }
  for (const r of results) r.ratio = Math.round((r.ours / r.baseline) * 100) / 100;
  return results;
}

// Run alone (`node bench/informer.bench.ts`) it prints its own lines; bench/run.ts prints a table.
if (import.meta.main) {
  for (const r of await run()) console.log(`${r.name}: ours ${r.ours} ${r.unit}, baseline ${r.baseline} ${r.unit}, ratio ${r.ratio}${r.note ? ` (${r.note})` : ''}`);
}
