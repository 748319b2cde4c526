// Watches one member's API server for the harness's Secrets (sources and copies alike) and
// reports every write and every deletion it sees, whoever made them: the ground truth the write
// bounds and the deletion checks are held to. It rides out its API server being killed or paused
// (reconnecting from where it was) and compactions (a 410 relists and tells what changed
// meanwhile, as an informer would).
import { ANNOTATIONS } from '../../src/core/api/keys.ts';
import { SECRETS } from '../../src/core/api/resources.ts';
import { sleep, type KubeList, type KubeObject, type RestClient } from '../../src/kube/index.ts';
import { resumingWatch, type ResumingWatch } from '../support/resuming-watch.ts';

/** A write as the report of a violation shows it: when, the data, and the source the copy records. */
function describe(obj: KubeObject): string {
  const data = (obj as { data?: Record<string, string> }).data?.['v'];
  const source = obj.metadata.annotations?.[ANNOTATIONS.source] ?? '';
  const managers = ((obj.metadata.managedFields ?? []) as { manager?: string; operation?: string }[]).map((m) => `${m.manager ?? ''}/${m.operation ?? ''}`).join(',');
  const selected = Object.keys(obj.metadata.labels ?? {}).filter((k) => k.startsWith('chaos-')).join(',');
  return `${new Date().toISOString().slice(11, 23)} v=${data ? Buffer.from(data, 'base64').toString() : ''} labels=${selected} fields=${managers} ${source}`;
}

/** How long to wait before asking an API server that did not answer again. */
const RETRY_MS = 300;

export class Observer {
  /** Writes seen per object name since `takeWrites`, each as what it left (for a violation's report). */
  private writes = new Map<string, string[]>();
  /** name -> uid and resourceVersion as last seen. */
  private readonly known = new Map<string, { uid: string; rv: string }>();
  private readonly abort = new AbortController();
  private watch: ResumingWatch | undefined;
  /** Why its watch ended before stop(), if it did. */
  private failure: unknown;

  readonly cluster: string;
  private readonly rest: RestClient;
  private readonly namespace: string;
  private readonly labelSelector: string;
  /** Runs as each deletion is seen (or inferred from a relist), before anything else happens. */
  private readonly onDelete: (cluster: string, name: string) => void;

  private constructor(cluster: string, rest: RestClient, namespace: string, labelSelector: string, onDelete: (cluster: string, name: string) => void) {
    this.cluster = cluster;
    this.rest = rest;
    this.namespace = namespace;
    this.labelSelector = labelSelector;
    this.onDelete = onDelete;
  }

  /** Starts watching (its API server must answer now); writes count from now on. */
  static async start(cluster: string, rest: RestClient, namespace: string, labelSelector: string, onDelete: (cluster: string, name: string) => void): Promise<Observer> {
    const o = new Observer(cluster, rest, namespace, labelSelector, onDelete);
    const resourceVersion = await o.relist(false);
    o.watch = await resumingWatch(rest, SECRETS, { namespace, labelSelector, resourceVersion, timeoutSeconds: 120, relist: () => o.relist(true), retryMs: RETRY_MS }, (type, obj) => o.apply(obj, type === 'DELETED'));
    void o.watch.ended.then((err) => (o.failure = err));
    return o;
  }

  /** The writes seen per name since the last call, and starts counting afresh. */
  takeWrites(): Map<string, string[]> {
    // An observer that stopped watching would report too few writes and deletions.
    if (this.failure !== undefined) throw new Error(`the observer of ${this.cluster} stopped watching`, { cause: this.failure });
    const w = this.writes;
    this.writes = new Map();
    return w;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.watch?.close();
    await this.watch?.ended;
  }

  private apply(obj: KubeObject, deleted: boolean): void {
    const name = obj.metadata.name ?? '';
    const uid = obj.metadata.uid ?? '';
    const before = this.known.get(name);
    if (deleted) {
      this.known.delete(name);
      this.onDelete(this.cluster, name);
      return;
    }
    // Another uid under a known name: the old object was deleted in a gap of the watch.
    if (before && before.uid !== uid) this.onDelete(this.cluster, name);
    if (before?.uid === uid && before.rv === obj.metadata.resourceVersion) return;
    this.known.set(name, { uid, rv: obj.metadata.resourceVersion ?? '' });
    const seen = this.writes.get(name) ?? [];
    seen.push(describe(obj));
    this.writes.set(name, seen);
  }

  /**
   * Lists afresh; when `diff`, tells what the list shows changed since the watch broke off
   * (objects gone, replaced or written; several writes in the gap count as one). Returns the
   * list's resourceVersion.
   */
  private async relist(diff: boolean): Promise<string> {
    const list = await this.listUntilAnswered();
    // Outside the retried listing: what is told here is told once, whatever the callbacks do.
    const present = new Set(list.items.map((o) => o.metadata.name ?? ''));
    for (const name of [...this.known.keys()]) {
      if (present.has(name)) continue;
      this.known.delete(name);
      if (diff) this.onDelete(this.cluster, name);
    }
    for (const o of list.items) {
      if (diff) this.apply(o, false);
      else this.known.set(o.metadata.name ?? '', { uid: o.metadata.uid ?? '', rv: o.metadata.resourceVersion ?? '' });
    }
    return list.metadata.resourceVersion ?? '';
  }

  /** Lists the watched objects, again and again while the API server fails to answer (stopped: throws). */
  private async listUntilAnswered(): Promise<KubeList<KubeObject>> {
    for (;;) {
      try {
        return await this.rest.list(SECRETS, { namespace: this.namespace, labelSelector: this.labelSelector, signal: this.abort.signal });
      } catch (err) {
        if (this.abort.signal.aborted) throw err;
        await sleep(RETRY_MS, this.abort.signal);
      }
    }
  }
}
