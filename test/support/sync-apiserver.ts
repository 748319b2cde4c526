// An API server in memory, for unit tests of what runs over the runtime's real clients (REST
// client, informers, discovery): objects of the kinds it is told to serve, listed, watched (from
// any resourceVersion it has handed out), read, created, updated, merge-patched, applied (a plain
// replacement of what the body names) and deleted (with preconditions), SelfSubjectAccessReviews
// answered by a test's policy, and legacy discovery. Nothing of Kubernetes' semantics beyond that:
// no defaulting, admission, field ownership, finalizers or paging.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RestClient, type ResourceAttributes } from '../../src/kube/rest.ts';
import type { KubeObject } from '../../src/kube/types.ts';

export interface ServedKind {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

const REGISTRY_GROUP = 'clusterregistry.k8s.cisco.com';

/** What every member serves: the core kinds the sync reads and writes, and the registry's own. */
export const STANDARD_KINDS: readonly ServedKind[] = [
  { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false },
  { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true },
  { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true },
  { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false },
  { group: REGISTRY_GROUP, version: 'v1alpha1', resource: 'clusters', kind: 'Cluster', namespaced: false },
  { group: REGISTRY_GROUP, version: 'v1alpha1', resource: 'clusterfeatures', kind: 'ClusterFeature', namespaced: false },
  { group: REGISTRY_GROUP, version: 'v1alpha1', resource: 'resourcesyncrules', kind: 'ResourceSyncRule', namespaced: false },
];

export interface RecordedRequest {
  /** When it arrived (Date.now()). */
  readonly at: number;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: unknown;
}

interface Watch {
  readonly kind: ServedKind;
  readonly namespace: string | undefined;
  readonly query: URLSearchParams;
  readonly res: http.ServerResponse;
}

type Fail = { code: number; reason: string; message: string };

function apiVersion(k: { group: string; version: string }): string {
  return k.group ? `${k.group}/${k.version}` : k.version;
}

/** Label selectors of the forms the runtime sends: `k`, `!k`, `k=v`, `k==v`, `k!=v`, comma-joined. */
function labelsMatch(selector: string | null, labels: Record<string, string> | undefined): boolean {
  // Requirements are comma-separated, except inside the value sets of `in` and `notin`.
  for (const req of (selector ?? '').split(/,(?![^(]*\))/).filter(Boolean)) {
    const set = /^\s*([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)\s*$/.exec(req);
    if (set) {
      const [, key = '', op, values = ''] = set;
      const value = labels?.[key];
      const member = value !== undefined && values.split(',').map((v) => v.trim()).includes(value);
      if (op === 'in' ? !member : member) return false;
      continue;
    }
    const m = /^(!?)([^!=]+)(?:(==|=|!=)(.*))?$/.exec(req.trim());
    if (!m) return false;
    const [, not, key = '', op, value] = m;
    const has = labels !== undefined && Object.hasOwn(labels, key);
    const ok = op === undefined ? has !== (not === '!') : op === '!=' ? labels?.[key] !== value : labels?.[key] === value;
    if (!ok) return false;
  }
  return true;
}

/** Field selectors `a.b=v` / `a.b!=v`, comma-joined (escapes are not undone). */
function fieldsMatch(selector: string | null, obj: KubeObject): boolean {
  for (const req of (selector ?? '').split(',').filter(Boolean)) {
    const m = /^([^!=]+)(==|=|!=)(.*)$/.exec(req);
    if (!m) return false;
    const [, path = '', op, value] = m;
    let v: unknown = obj;
    for (const p of path.split('.')) v = (v as Record<string, unknown> | undefined)?.[p];
    const text = typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
    if ((op === '!=') === (text === value)) return false;
  }
  return true;
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export class MemoryApiServer {
  /** A real client of this server. */
  readonly rest: RestClient;
  /** Every request, in order. */
  readonly requests: RecordedRequest[] = [];
  /** Whether a SelfSubjectAccessReview is allowed; everything is, unless a test says otherwise. */
  allow: (attributes: ResourceAttributes) => boolean = () => true;
  /** Whether lists and watches of a resource (in a namespace) are refused with 403; none are, unless a test says otherwise. */
  denyList: (resource: string, namespace: string | undefined) => boolean = () => false;
  private readonly kinds: ServedKind[];
  private readonly objects = new Map<string, KubeObject>();
  private readonly watches = new Set<Watch>();
  private readonly log: { rv: number; type: string; kind: ServedKind; object: KubeObject }[] = [];
  private readonly held = new Map<string, Promise<void>>();
  private rv = 1;
  private readonly server: http.Server;

  private constructor(server: http.Server, kinds: readonly ServedKind[]) {
    this.server = server;
    this.kinds = [...kinds];
    const port = (server.address() as AddressInfo).port;
    this.rest = new RestClient({ server: new URL(`http://127.0.0.1:${port}`), tls: {}, authHeaders: () => Promise.resolve({}), invalidate: () => undefined }, { maxRetries: 0 });
  }

  static async start(kinds: readonly ServedKind[] = STANDARD_KINDS): Promise<MemoryApiServer> {
    const box: { self?: MemoryApiServer } = {};
    const server = http.createServer((req, res) => void box.self?.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (box.self = new MemoryApiServer(server, kinds));
  }

  /** Serves one more kind from now on (a CRD installed). */
  serve(kind: ServedKind): void {
    this.kinds.push(kind);
  }

  /** Creates or replaces an object as a client would (uid and resourceVersion assigned), told to every watch; returns it as stored. */
  put<T extends KubeObject>(obj: T): T {
    const kind = this.kindOf(obj);
    const key = this.key(kind, obj.metadata.namespace, obj.metadata.name ?? '');
    return this.store(kind, key, obj, this.objects.get(key)) as T;
  }

  /** Deletes an object, if there. */
  remove(obj: Pick<KubeObject, 'apiVersion' | 'kind'> & { metadata: { namespace?: string; name?: string } }): void {
    const kind = this.kindOf(obj);
    this.drop(kind, this.key(kind, obj.metadata.namespace, obj.metadata.name ?? ''));
  }

  get(obj: Pick<KubeObject, 'apiVersion' | 'kind'> & { metadata: { namespace?: string; name?: string } }): KubeObject | undefined {
    const kind = this.kindOf(obj);
    return this.objects.get(this.key(kind, obj.metadata.namespace, obj.metadata.name ?? ''));
  }

  /** Lists of that resource wait until the returned function is called. */
  hold(resource: string): () => void {
    let release!: () => void;
    this.held.set(resource, new Promise<void>((r) => (release = r)));
    return () => {
      this.held.delete(resource);
      release();
    };
  }

  /** Ends every watch of that resource as a server does whose history no longer reaches back to it (410 Gone): the watcher lists again. */
  expireWatches(resource: string): void {
    for (const w of [...this.watches]) {
      if (w.kind.resource !== resource) continue;
      this.watches.delete(w);
      w.res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version' } })}\n`);
    }
  }

  /** Watches of that resource (in that namespace, when given) open now. */
  openWatches(resource: string, namespace?: string): number {
    return [...this.watches].filter((w) => w.kind.resource === resource && (namespace === undefined || w.namespace === namespace)).length;
  }

  close(): void {
    this.rest.close();
    for (const w of this.watches) w.res.destroy();
    this.server.closeAllConnections();
    this.server.close();
  }

  // ---------------------------------------------------------------- objects

  private kindOf(obj: Pick<KubeObject, 'apiVersion' | 'kind'>): ServedKind {
    const found = this.kinds.find((k) => apiVersion(k) === obj.apiVersion && k.kind === obj.kind);
    if (!found) throw new Error(`${obj.kind} of ${obj.apiVersion} is not served`);
    return found;
  }

  private key(kind: ServedKind, namespace: string | undefined, name: string): string {
    return `${kind.group}/${kind.resource}|${kind.namespaced ? (namespace ?? '') : ''}/${name}`;
  }

  private store(kind: ServedKind, key: string, obj: KubeObject, old: KubeObject | undefined): KubeObject {
    const rv = String(++this.rv);
    const metadata = { ...obj.metadata, uid: old?.metadata.uid ?? obj.metadata.uid ?? randomUUID(), resourceVersion: rv, creationTimestamp: old?.metadata.creationTimestamp ?? new Date().toISOString() };
    if (!kind.namespaced) delete metadata.namespace;
    const stored: KubeObject = { ...obj, apiVersion: apiVersion(kind), kind: kind.kind, metadata };
    this.objects.set(key, stored);
    this.emit(old ? 'MODIFIED' : 'ADDED', kind, stored);
    return stored;
  }

  private drop(kind: ServedKind, key: string): KubeObject | undefined {
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.objects.delete(key);
    const gone = { ...old, metadata: { ...old.metadata, resourceVersion: String(++this.rv) } };
    this.emit('DELETED', kind, gone);
    return gone;
  }

  private emit(type: string, kind: ServedKind, object: KubeObject): void {
    this.log.push({ rv: Number(object.metadata.resourceVersion), type, kind, object });
    for (const w of this.watches) if (this.inScope(w.kind, w.namespace, w.query, kind, object)) w.res.write(`${JSON.stringify({ type, object })}\n`);
  }

  private inScope(want: ServedKind, namespace: string | undefined, query: URLSearchParams, kind: ServedKind, o: KubeObject): boolean {
    return want === kind && (!namespace || o.metadata.namespace === namespace) && labelsMatch(query.get('labelSelector'), o.metadata.labels) && fieldsMatch(query.get('fieldSelector'), o);
  }

  // ---------------------------------------------------------------- HTTP

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body: unknown = text ? JSON.parse(text) : undefined;
    this.requests.push({ at: Date.now(), method: req.method ?? '', path: url.pathname, query: url.searchParams, body });
    const answer = (code: number, value: unknown): void => {
      res.writeHead(code, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const fail = (f: Fail): void => answer(f.code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', ...f });
    const discovery = this.discovery(url.pathname);
    if (discovery) return answer(200, discovery);
    if (req.method === 'POST' && url.pathname === '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews') {
      const review = body as { spec: { resourceAttributes: ResourceAttributes } };
      return answer(201, { ...review, status: { allowed: this.allow(review.spec.resourceAttributes) } });
    }
    const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))\/(.*)$/.exec(url.pathname);
    let rest = (m?.[4] ?? '').split('/').filter(Boolean);
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [resource, name, sub] = rest;
    const kind = m && this.kinds.find((k) => k.group === (m[2] ?? '') && k.version === (m[1] ?? m[3]) && k.resource === resource);
    if (!kind) return fail({ code: 404, reason: 'NotFound', message: `the server could not find the requested resource ${url.pathname}` });
    if (name === undefined && req.method === 'GET' && this.denyList(resource ?? '', namespace)) return fail({ code: 403, reason: 'Forbidden', message: 'forbidden' });
    if (name === undefined) {
      if (req.method === 'GET' && url.searchParams.get('watch') === '1') return this.watch(kind, namespace, url.searchParams, res);
      if (req.method === 'GET') {
        await this.held.get(resource ?? '');
        const items = [...this.objects.values()].filter((o) => this.inScope(kind, namespace, url.searchParams, this.kindOf(o), o));
        return answer(200, { kind: `${kind.kind}List`, apiVersion: apiVersion(kind), metadata: { resourceVersion: String(this.rv) }, items });
      }
      if (req.method === 'POST') {
        const obj = body as KubeObject;
        const key = this.key(kind, namespace, obj.metadata.name ?? '');
        if (this.objects.has(key)) return fail({ code: 409, reason: 'AlreadyExists', message: `${resource} "${obj.metadata.name}" already exists` });
        return answer(201, this.store(kind, key, { ...obj, metadata: { ...obj.metadata, namespace } }, undefined));
      }
      return fail({ code: 405, reason: 'MethodNotAllowed', message: req.method ?? '' });
    }
    const key = this.key(kind, namespace, name);
    const old = this.objects.get(key);
    const missing = (): void => fail({ code: 404, reason: 'NotFound', message: `${resource} "${name}" not found` });
    const conflict = (): void => fail({ code: 409, reason: 'Conflict', message: `the object has been modified; please apply your changes to the latest version and try again` });
    switch (req.method) {
      case 'GET':
        return old ? answer(200, old) : missing();
      case 'DELETE': {
        if (!old) return missing();
        const pre = (body as { preconditions?: { uid?: string; resourceVersion?: string } } | undefined)?.preconditions;
        if ((pre?.uid && pre.uid !== old.metadata.uid) || (pre?.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion)) return conflict();
        return answer(200, this.drop(kind, key));
      }
      case 'PUT':
      case 'PATCH': {
        const contentType = req.headers['content-type'] ?? '';
        const applying = contentType.startsWith('application/apply-patch');
        if (!old && !applying) return missing();
        const change = body as KubeObject;
        const wantedRV = req.method === 'PUT' || applying ? change.metadata?.resourceVersion : undefined;
        if (old && wantedRV && wantedRV !== old.metadata.resourceVersion) return conflict();
        let next: KubeObject;
        if (req.method === 'PATCH' && contentType.startsWith('application/merge-patch')) next = mergePatch(old, body) as KubeObject;
        else if (req.method === 'PUT' || applying) next = { ...old, ...change, metadata: { ...old?.metadata, ...change.metadata } };
        else return fail({ code: 415, reason: 'UnsupportedMediaType', message: contentType });
        // The status subresource changes the status only; the object itself, everything else.
        if (sub === 'status') next = { ...(old ?? next), status: next['status'] };
        else if (old) next = { ...next, status: old['status'] };
        return answer(200, this.store(kind, key, { ...next, metadata: { ...next.metadata, namespace, name } }, old));
      }
      default:
        return fail({ code: 405, reason: 'MethodNotAllowed', message: req.method ?? '' });
    }
  }

  private watch(kind: ServedKind, namespace: string | undefined, query: URLSearchParams, res: http.ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.flushHeaders();
    const from = Number(query.get('resourceVersion') || '0');
    for (const e of this.log) if (e.rv > from && this.inScope(kind, namespace, query, e.kind, e.object)) res.write(`${JSON.stringify({ type: e.type, object: e.object })}\n`);
    const w: Watch = { kind, namespace, query, res };
    this.watches.add(w);
    res.on('close', () => this.watches.delete(w));
  }

  /** Legacy discovery documents, or undefined for any other path. */
  private discovery(path: string): object | undefined {
    if (path === '/api') return { kind: 'APIVersions', versions: ['v1'] };
    if (path === '/apis') {
      const groups = [...new Set(this.kinds.filter((k) => k.group).map((k) => k.group))];
      const versions = (g: string) => [...new Set(this.kinds.filter((k) => k.group === g).map((k) => k.version))].map((version) => ({ groupVersion: `${g}/${version}`, version }));
      return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((name) => ({ name, versions: versions(name) })) };
    }
    const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(path);
    if (!m) return undefined;
    const group = m[2] ?? '';
    const version = m[1] ?? m[3] ?? '';
    const kinds = this.kinds.filter((k) => k.group === group && k.version === version);
    if (kinds.length === 0) return undefined;
    const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
    return {
      kind: 'APIResourceList',
      groupVersion: apiVersion({ group, version }),
      resources: kinds.flatMap((k) => [
        { name: k.resource, kind: k.kind, namespaced: k.namespaced, verbs },
        { name: `${k.resource}/status`, kind: k.kind, namespaced: k.namespaced, verbs: ['get', 'patch', 'update'] },
      ]),
    };
  }
}
