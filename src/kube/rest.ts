// A raw-JSON REST client for one cluster. Objects travel as plain JSON, so no field is ever
// dropped. What a call means (retries, deadline, caps) is here; how its bytes travel (one HTTP/2
// connection for the client and those derived from it, or HTTP/1.1 agents) is the transport's.
import type { IncomingHttpHeaders } from 'node:http';
import { isPathSegment } from '../core/api/names.ts';
import { http } from './node-http.ts';
import { Backoff, sleep } from './backoff.ts';
import type { ClusterConfig, ConnectionSettings } from './config.ts';
import { ApiError, ConnectionLostError, WatchInactivityError, isNetworkError, isNotFound, isNotProcessed, RequestNotProcessedError } from './errors.ts';
import type { Status } from './errors.ts';
import { counter, exponentialBuckets, histogram } from './metrics.ts';
import { Http1Transport } from './http1-transport.ts';
import { Http2Transport } from './http2-transport.ts';
import type { Exchange, ResponseHead, Transport, TransportStats } from './transport.ts';
import { apiVersionOf, type KubeList, type KubeObject, type ResourceRef, type WatchEvent } from './types.ts';

const requestsTotal = counter({
  name: 'rest_client_requests_total',
  help: 'Number of HTTP requests, partitioned by status code, method, and host.',
  labelNames: ['code', 'method', 'host'],
});
const requestDuration = histogram({
  name: 'rest_client_request_duration_seconds',
  help: 'Request latency in seconds. Broken down by verb and host.',
  labelNames: ['verb', 'host'],
  buckets: exponentialBuckets(0.005, 2, 12),
});

/** The `host` label of a client that reaches a peer (or hub) by the name of its Cluster here. */
export function peerHostLabel(cluster: string): string {
  return `${PEER_HOST_PREFIX}${cluster}`;
}

/** The `host` label of a client that reaches a hub (hub-and-spoke) by the name of its Cluster here. */
export function hubHostLabel(cluster: string): string {
  return `${HUB_HOST_PREFIX}${cluster}`;
}

const PEER_HOST_PREFIX = 'peer/';
const HUB_HOST_PREFIX = 'hub/';
/** The `host` labels under which the requests to peers (and hubs) whose clients all closed stay counted. */
export const CLOSED_PEERS_HOST = 'peer/(closed)';
export const CLOSED_HUBS_HOST = 'hub/(closed)';

/** More `host` labels than this in use at once share OVERFLOW_HOST: room for every peer, hub and server of ours. */
export const MAX_HOST_LABELS = 512;
export const OVERFLOW_HOST = 'other';

/**
 * The `host` labels of open clients, with the series each has. A label's series go when the last
 * client using it closes, and a closed client counts nothing more, so peers that come and go
 * leave no series behind. The `code` label is a status Node knows (or `other`): a peer picks its
 * status codes, and each would be a series.
 */
class HostLabels {
  private readonly inUse = new Map<string, { clients: number; counted: Map<string, { code: string; method: string; n: number }>; timed: Set<string> }>();

  acquire(wanted: string): string {
    const label = this.inUse.has(wanted) || this.inUse.size < MAX_HOST_LABELS ? wanted : OVERFLOW_HOST;
    const entry = this.inUse.get(label) ?? { clients: 0, counted: new Map(), timed: new Set() };
    entry.clients++;
    this.inUse.set(label, entry);
    return label;
  }

  release(host: string): void {
    const entry = this.inUse.get(host);
    if (!entry || --entry.clients > 0) return;
    this.inUse.delete(host);
    // What was sent to peers that went stays counted, together: a write to a peer is news even after it left.
    for (const { code, method, n } of entry.counted.values()) {
      requestsTotal.remove({ code, method, host });
      const closed = host.startsWith(PEER_HOST_PREFIX) ? CLOSED_PEERS_HOST : host.startsWith(HUB_HOST_PREFIX) ? CLOSED_HUBS_HOST : undefined;
      if (closed) requestsTotal.inc({ code, method, host: closed }, n);
    }
    for (const verb of entry.timed) requestDuration.remove({ verb, host });
  }

  count(host: string, status: string | number, method: string): void {
    const entry = this.inUse.get(host);
    if (!entry) return;
    const code = typeof status === 'string' ? status : http.STATUS_CODES[status] ? String(status) : 'other';
    const key = `${code} ${method}`;
    const counted = entry.counted.get(key) ?? { code, method, n: 0 };
    counted.n++;
    entry.counted.set(key, counted);
    requestsTotal.inc({ code, method, host });
  }

  time(host: string, verb: string, seconds: number): void {
    const entry = this.inUse.get(host);
    if (!entry) return;
    entry.timed.add(verb);
    requestDuration.observe({ verb, host }, seconds);
  }
}

const hostLabels = new HostLabels();

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

/**
 * Our own API server gets the defaults; a peer, which may be slow or hostile, gets tighter limits
 * so that it cannot hold a call, our memory or a watch for long.
 */
export interface RestClientOptions {
  /**
   * Deadline of a whole call: every attempt, the waits between them, and the answer up to its
   * last byte (a trickling body is cut). Each attempt sends the time left as `?timeout=` so the
   * server gives up too. Default 30 s.
   */
  timeoutMs?: number;
  /**
   * Retries of 429s, of 5xx and dropped connections on idempotent calls, and of any request the
   * server refused before processing it (an HTTP/2 stream refused, or above a GOAWAY's last
   * stream). Default 5.
   */
  maxRetries?: number;
  /** First retry delay; doubles with jitter up to 10 s. Default 200 ms. */
  retryBaseMs?: number;
  /** Longest Retry-After honoured; a longer one is waited this long. Default 60 s. */
  maxRetryAfterMs?: number;
  /**
   * Largest response body read; past it the call fails without reading the rest. Default 256 MiB,
   * half of the longest string V8 makes: a bigger JSON answer could not be parsed anyway.
   */
  maxResponseBytes?: number;
  /** Longest watch event line; a longer one ends the watch with an error. Default 64 MiB. */
  maxWatchLineBytes?: number;
  userAgent?: string;
  /**
   * Reads only (a peer's cluster): every request but GET, and a POST of a self access review,
   * is refused before it is sent, whatever code asks for it.
   */
  readOnly?: boolean;
  /** The only writes allowed, by method and path (the status a spoke reports to its hub): the client is read-only but for these. */
  allowWrite?: (method: string, path: string) => boolean;
  /**
   * The name of the Cluster this client reaches, when it is a peer's: its requests are counted
   * under that name (`peer/<name>`), not under the server's address, which is the peer's to
   * choose. Our own API server is counted under its address.
   */
  peer?: string;
  /** The same for a hub of hub-and-spoke sync (`hub/<name>`): the one peer a spoke writes to. */
  hub?: string;
  /**
   * How long an HTTP/2 connection may read nothing before it is checked with a PING; one
   * unanswered for half as long ends the connection and fails its streams (a watch never hangs on
   * a dead one). Default 30 s.
   */
  pingIntervalMs?: number;
}

/** One transport shared by a client and those `withOptions` derived from it; it closes with the last. */
class SharedTransport {
  readonly transport: Transport;
  private holders = 0;

  constructor(server: URL, tls: ConnectionSettings['tls'], pingIntervalMs: number) {
    this.transport = server.protocol === 'https:' ? new Http2Transport(server, tls, pingIntervalMs) : new Http1Transport(server, tls);
  }

  acquire(): this {
    this.holders++;
    return this;
  }

  release(): void {
    if (--this.holders === 0) this.transport.close();
  }
}

/** The one write a read-only client sends: asking the server what it may do. */
const SELF_REVIEW_PATH = /^\/apis\/authorization\.k8s\.io\/v1\/self(subjectaccess|subjectrules)reviews$/;

export class ReadOnlyError extends Error {
  override readonly name = 'ReadOnlyError';
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface ListOptions extends CallOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  /** Overrides the Accept header, e.g. for PartialObjectMetadataList. */
  accept?: string;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
  sendInitialEvents?: boolean;
  resourceVersionMatch?: 'NotOlderThan';
  /** Fail the stream with WatchInactivityError after this long without a byte (from the request on). */
  inactivityTimeoutMs?: number;
  accept?: string;
  signal?: AbortSignal;
}

export interface WriteOptions extends CallOptions {
  fieldManager?: string;
  dryRun?: boolean;
  /** `status` to write the status subresource. */
  subresource?: string;
}

export interface PatchOptions extends WriteOptions {
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

export interface DeleteOptions extends CallOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface RawRequest extends CallOptions {
  method: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  accept?: string;
  /** Safe to retry after a 5xx or a dropped connection. Defaults to true for GET and HEAD. */
  idempotent?: boolean;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A live watch; iterate it for events. `close()` or the signal ends the iteration quietly. */
export interface WatchStream<T extends KubeObject = KubeObject> extends AsyncIterable<WatchEvent<T>> {
  /** The same events, grouped as they arrived (one await per network chunk, not per event). */
  batches(): AsyncIterable<WatchEvent<T>[]>;
  close(): void;
}

/** What a SelfSubjectAccessReview asks about. */
export interface ResourceAttributes {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly verb: string;
  readonly namespace?: string;
}

export interface AccessReviewStatus {
  readonly allowed: boolean;
  readonly denied?: boolean;
  readonly reason?: string;
  readonly evaluationError?: string;
}

/** A response larger than the client's cap; the rest was never read. */
export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
}

/**
 * Names reach us from peers and from templates: '.' and '..' would make the path name the
 * collection or the namespace instead (a delete of '..' would target the namespace), and a name
 * with '/' or '%' the API server refuses with a 400 (better said here, without a round trip).
 */
function segment(what: string, value: string): string {
  if (!isPathSegment(value)) throw new Error(`invalid ${what} ${JSON.stringify(value)} in a request path`);
  return encodeURIComponent(value);
}

export function resourcePath(ref: ResourceRef, namespace?: string, name?: string, subresource?: string): string {
  let p = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  if (namespace) p += `/namespaces/${segment('namespace', namespace)}`;
  p += `/${ref.resource}`;
  if (name !== undefined) p += `/${segment('name', name)}`;
  if (subresource) p += `/${subresource}`;
  return p;
}

export class RestClient {
  readonly server: URL;
  private readonly conn: ConnectionSettings;
  private readonly opts: RestClientOptions;
  private readonly shared: SharedTransport;
  private readonly host: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly retryBaseMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly maxResponseBytes: number;
  private readonly maxWatchLineBytes: number;
  private readonly userAgent: string;
  private readonly readOnly: boolean;
  private readonly allowWrite: ((method: string, path: string) => boolean) | undefined;
  private closed = false;
  /** Set only while `withOptions` makes a client over this one's connection. */
  static #deriving: SharedTransport | undefined;

  constructor(conn: ConnectionSettings, opts: RestClientOptions = {}) {
    this.conn = conn;
    this.opts = opts;
    this.server = conn.server;
    // First, so that TLS material Node refuses fails here before anything is held.
    this.shared = (RestClient.#deriving ?? new SharedTransport(conn.server, conn.tls, opts.pingIntervalMs ?? 30_000)).acquire();
    this.host = hostLabels.acquire(opts.hub !== undefined ? hubHostLabel(opts.hub) : opts.peer !== undefined ? peerHostLabel(opts.peer) : conn.server.host);
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxRetries = opts.maxRetries ?? 5;
    this.retryBaseMs = opts.retryBaseMs ?? 200;
    this.maxRetryAfterMs = opts.maxRetryAfterMs ?? 60_000;
    this.maxResponseBytes = opts.maxResponseBytes ?? 256 * 2 ** 20;
    this.maxWatchLineBytes = opts.maxWatchLineBytes ?? 64 * 2 ** 20;
    this.userAgent = opts.userAgent ?? `cluster-registry/${process.version}`;
    // Naming the writes allowed makes the client refuse every other.
    this.readOnly = opts.readOnly ?? opts.allowWrite !== undefined;
    this.allowWrite = opts.allowWrite;
  }

  private get transport(): Transport {
    return this.shared.transport;
  }

  /**
   * A client of the same server over the same connection, with these options over this one's (a
   * probe's shorter deadline, say: read-only stays read-only unless said). Each is closed on its
   * own; the connection goes with the last.
   */
  withOptions(overrides: Omit<RestClientOptions, 'pingIntervalMs'>): RestClient {
    if (this.closed) throw new Error('withOptions of a closed client');
    RestClient.#deriving = this.shared;
    try {
      return new RestClient(this.conn, { ...this.opts, ...overrides });
    } finally {
      RestClient.#deriving = undefined;
    }
  }

  /** The connections of this client (and those derived from it): protocol, how many are open and were opened, GOAWAYs seen. */
  connectionStats(): TransportStats {
    return this.transport.stats();
  }

  static async fromConfig(config: ClusterConfig, opts?: RestClientOptions): Promise<RestClient> {
    return new RestClient(await config.connection(), opts);
  }

  /**
   * Drops the client's metric series, and its connections when no client derived from it is
   * open; call it once the informers and calls using it have stopped.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    hostLabels.release(this.host);
    this.shared.release();
  }

  async get<T extends KubeObject = KubeObject>(ref: ResourceRef, namespace: string | undefined, name: string, opts: CallOptions & { subresource?: string } = {}): Promise<T> {
    return this.json<T>({ ...opts, method: 'GET', path: resourcePath(ref, namespace, name, opts.subresource) });
  }

  /** The object, or undefined when the server says there is none (any other failure throws). */
  async getIfExists<T extends KubeObject = KubeObject>(ref: ResourceRef, namespace: string | undefined, name: string, opts: CallOptions = {}): Promise<T | undefined> {
    try {
      return await this.get<T>(ref, namespace, name, opts);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** One page of a list, its items whole (with apiVersion and kind); follow `metadata.continue` or use `listAll`. */
  async list<T extends KubeObject = KubeObject>(ref: ResourceRef, opts: ListOptions = {}): Promise<KubeList<T>> {
    const page = await this.json<KubeList<T>>({
      ...opts,
      method: 'GET',
      path: resourcePath(ref, opts.namespace),
      query: {
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        limit: opts.limit,
        continue: opts.continue,
        resourceVersion: opts.resourceVersion,
        resourceVersionMatch: opts.resourceVersionMatch,
      },
    });
    // List items carry no apiVersion/kind; callers (rules, handlers) expect whole objects.
    const apiVersion = page.apiVersion ?? apiVersionOf(ref);
    const kind = page.kind?.replace(/List$/, '');
    for (const item of page.items ?? []) {
      item.apiVersion ??= apiVersion;
      if (kind) item.kind ??= kind;
    }
    return page;
  }

  /** All pages (default 500 per page); the list RV is the one of the last page. */
  async listAll<T extends KubeObject = KubeObject>(ref: ResourceRef, opts: ListOptions = {}): Promise<KubeList<T>> {
    const items: T[] = [];
    let page: KubeList<T>;
    let cont: string | undefined;
    do {
      page = await this.list<T>(ref, { limit: 500, ...opts, continue: cont });
      for (const item of page.items) items.push(item);
      cont = page.metadata.continue || undefined;
    } while (cont);
    return { ...page, metadata: { resourceVersion: page.metadata.resourceVersion }, items };
  }

  async create<T extends KubeObject>(ref: ResourceRef, namespace: string | undefined, obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.json<T>({
      ...opts,
      method: 'POST',
      path: resourcePath(ref, namespace, undefined, opts.subresource),
      query: writeQuery(opts),
      body: obj,
    });
  }

  /**
   * PUT. The object's `metadata.resourceVersion` is the precondition: a stale one fails with 409
   * Conflict (see `isConflict`).
   */
  async update<T extends KubeObject>(ref: ResourceRef, namespace: string | undefined, obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.json<T>({
      ...opts,
      method: 'PUT',
      path: resourcePath(ref, namespace, requireName(obj), opts.subresource),
      query: writeQuery(opts),
      body: obj,
    });
  }

  async updateStatus<T extends KubeObject>(ref: ResourceRef, namespace: string | undefined, obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.update(ref, namespace, obj, { ...opts, subresource: 'status' });
  }

  async getStatus<T extends KubeObject = KubeObject>(ref: ResourceRef, namespace: string | undefined, name: string, opts: CallOptions = {}): Promise<T> {
    return this.get<T>(ref, namespace, name, { ...opts, subresource: 'status' });
  }

  async patch<T extends KubeObject = KubeObject>(ref: ResourceRef, namespace: string | undefined, name: string, type: PatchType, patch: unknown, opts: PatchOptions = {}): Promise<T> {
    if (type === 'apply' && !opts.fieldManager) throw new Error('server-side apply needs a fieldManager');
    return this.json<T>({
      ...opts,
      method: 'PATCH',
      path: resourcePath(ref, namespace, name, opts.subresource),
      query: { ...writeQuery(opts), force: type === 'apply' && opts.force ? true : undefined },
      body: patch,
      contentType: PATCH_CONTENT_TYPES[type],
      // Applying the same configuration twice gives the same result.
      idempotent: type === 'apply',
    });
  }

  async patchStatus<T extends KubeObject = KubeObject>(ref: ResourceRef, namespace: string | undefined, name: string, type: PatchType, patch: unknown, opts: PatchOptions = {}): Promise<T> {
    return this.patch<T>(ref, namespace, name, type, patch, { ...opts, subresource: 'status' });
  }

  /** Server-side apply of a whole object (`apiVersion`, `kind` and `metadata.name` required). */
  async apply<T extends KubeObject>(ref: ResourceRef, namespace: string | undefined, obj: T, opts: PatchOptions & { fieldManager: string }): Promise<T> {
    return this.patch<T>(ref, namespace, requireName(obj), 'apply', obj, opts);
  }

  /** Returns the deleted object, or a Status when the server answers with one. */
  async delete<T extends KubeObject = KubeObject>(ref: ResourceRef, namespace: string | undefined, name: string, opts: DeleteOptions = {}): Promise<T | Status> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
    if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
    if (opts.preconditions) body.preconditions = opts.preconditions;
    if (opts.dryRun) body.dryRun = ['All'];
    return this.json<T | Status>({ ...opts, method: 'DELETE', path: resourcePath(ref, namespace, name), body });
  }

  /** GET of any path, e.g. `/version` or `/readyz`; parsed as JSON when the answer is JSON. */
  async getRaw(path: string, opts: CallOptions = {}): Promise<RawResponse> {
    return this.request({ ...opts, method: 'GET', path, accept: '*/*' });
  }

  /** GET of any path, its JSON answer parsed; `accept` asks for a representation (discovery's aggregated one). */
  async getJson<T>(path: string, opts: CallOptions & { accept?: string } = {}): Promise<T> {
    return this.json<T>({ ...opts, method: 'GET', path });
  }

  /** Asks the server whether our credentials may do one thing there (a SelfSubjectAccessReview): a read, whatever its verb. */
  async reviewAccess(attributes: ResourceAttributes, opts: CallOptions = {}): Promise<AccessReviewStatus> {
    const review = await this.json<{ status?: AccessReviewStatus }>({
      ...opts,
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata: {}, spec: { resourceAttributes: attributes } },
    });
    return review.status ?? { allowed: false };
  }

  /** Parses the JSON answer of a request. */
  async json<T>(req: RawRequest): Promise<T> {
    const res = await this.request(req);
    return (res.body.length ? JSON.parse(res.body.toString('utf8')) : {}) as T;
  }

  /**
   * One call with retries: 429 always (the server did not act on it; Retry-After honoured up to
   * maxRetryAfterMs), a request the server did not process always, 5xx and dropped connections
   * only when idempotent, and one retry of a 401
   * with fresh credentials; all within the call's timeout (a wait that would outlast it is not
   * started: the last error is thrown). Non-2xx answers become ApiError.
   */
  async request(req: RawRequest): Promise<RawResponse> {
    if (this.readOnly && req.method !== 'GET' && !(req.method === 'POST' && SELF_REVIEW_PATH.test(req.path)) && !this.allowWrite?.(req.method, req.path)) {
      throw new ReadOnlyError(`${req.method} ${req.path}: refused, this client only reads`);
    }
    const idempotent = req.idempotent ?? (req.method === 'GET' || req.method === 'HEAD');
    const backoff = new Backoff({ initialMs: this.retryBaseMs, maxMs: 10_000 });
    const timeoutMs = req.timeoutMs ?? this.timeoutMs;
    const deadline = performance.now() + timeoutMs;
    const timedOut = (): Error => new Error(`${req.method} ${req.path}: timed out after ${timeoutMs} ms`);
    const waitToRetry = async (waitMs: number, err: unknown): Promise<void> => {
      if (performance.now() + waitMs >= deadline) throw err;
      await sleep(waitMs, req.signal);
      if (req.signal?.aborted) throw err;
    };
    let reauthenticated = false;
    for (let attempt = 0; ; attempt++) {
      let res: RawResponse;
      try {
        res = await this.send(req, deadline, timedOut);
      } catch (err) {
        // A request the server never processed is safe to send again, whatever it was.
        if (req.signal?.aborted || !(idempotent || isNotProcessed(err)) || attempt >= this.maxRetries || !isNetworkError(err)) throw err;
        await waitToRetry(backoff.next(), err);
        continue;
      }
      if (res.status >= 200 && res.status < 300) return res;
      if (res.status === 401 && !reauthenticated) {
        reauthenticated = true;
        this.conn.invalidate();
        continue;
      }
      const err = toApiError(res, req.method, req.path);
      const retriable = res.status === 429 || (idempotent && res.status >= 500 && res.status !== 501);
      if (!retriable || attempt >= this.maxRetries || req.signal?.aborted) throw err;
      await waitToRetry(err.retryAfterSeconds !== undefined ? Math.min(err.retryAfterSeconds * 1000, this.maxRetryAfterMs) : backoff.next(), err);
    }
  }

  private async send(req: RawRequest, deadline: number, timedOut: () => Error): Promise<RawResponse> {
    const timeoutMs = deadline - performance.now();
    if (timeoutMs <= 0) throw timedOut();
    const url = this.url(req.path, { ...req.query, timeout: `${Math.ceil(timeoutMs / 1000)}s` });
    const body = req.body === undefined ? undefined : typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
    const headers = await this.headers(req.accept, body === undefined ? undefined : (req.contentType ?? 'application/json'));
    const started = performance.now();
    let code: string | number = '<error>';
    try {
      const res = await new Promise<RawResponse>((resolve, reject) => {
        const exchange = this.transport.exchange({ url, method: req.method, headers, body, watch: false });
        const call = cancellable(exchange, req.signal, timeoutMs, timedOut, reject);
        const failed = (err: Error): void => {
          call.done();
          reject(err);
        };
        exchange.response.then(
          (head) =>
            readBody(head, call, this.maxResponseBytes, req.method, req.path).then((body) => {
              call.done();
              resolve({ status: head.status, headers: head.headers, body });
            }, failed),
          failed,
        );
      });
      code = res.status;
      return res;
    } finally {
      hostLabels.count(this.host, code, req.method);
      hostLabels.time(this.host, req.method, (performance.now() - started) / 1000);
    }
  }

  /**
   * Opens a watch. Resolves once the server accepted it (a refused watch, e.g. 410 Gone for a too
   * old resourceVersion, rejects with ApiError); then iterate the events.
   */
  async watch<T extends KubeObject = KubeObject>(ref: ResourceRef, opts: WatchOptions = {}): Promise<WatchStream<T>> {
    const backoff = new Backoff({ initialMs: this.retryBaseMs, maxMs: 10_000 });
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.openWatch<T>(ref, opts);
      } catch (err) {
        // A watch the server never started is started again, as a call would be sent again.
        if (!isNotProcessed(err) || attempt >= this.maxRetries || opts.signal?.aborted) throw err;
        await sleep(backoff.next(), opts.signal);
      }
    }
  }

  private async openWatch<T extends KubeObject>(ref: ResourceRef, opts: WatchOptions): Promise<WatchStream<T>> {
    const path = resourcePath(ref, opts.namespace);
    const url = this.url(path, {
      watch: 1,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      resourceVersion: opts.resourceVersion,
      allowWatchBookmarks: opts.allowWatchBookmarks,
      timeoutSeconds: opts.timeoutSeconds,
      sendInitialEvents: opts.sendInitialEvents,
      resourceVersionMatch: opts.resourceVersionMatch,
    });
    const headers = await this.headers(opts.accept, undefined);
    let code: string | number = '<error>';
    let call: Cancellable | undefined;
    try {
      const res = await new Promise<ResponseHead>((resolve, reject) => {
        const exchange = this.transport.exchange({ url, method: 'GET', headers, watch: true });
        call = cancellable(exchange, opts.signal, opts.inactivityTimeoutMs, () => new WatchInactivityError(`watch ${path}: no data for ${opts.inactivityTimeoutMs} ms`), reject);
        exchange.response.then((head) => {
          call!.touch();
          resolve(head);
        }, reject);
      });
      code = res.status;
      const c = call!;
      // The catch below finishes the call.
      if (res.status !== 200) throw toApiError({ status: res.status, headers: res.headers, body: await readBody(res, c, this.maxResponseBytes, 'WATCH', path) }, 'WATCH', path);
      // Answered on a connection whose watches were already sent elsewhere, it would end at once: opened again, it goes to a new one.
      if (res.retiring?.aborted) {
        c.close();
        throw new RequestNotProcessedError(`watch ${path}: answered on a connection told to go away`);
      }
      // Told later, it ends quietly, as a watch the server timed out does, and its reader starts
      // it again from the last event it took, on a new connection.
      if (res.retiring) c.endWhen(res.retiring);
      const batches = (): AsyncGenerator<WatchEvent<T>[]> => watchBatches<T>(res, c, this.maxWatchLineBytes, path);
      return {
        close: () => c.cancel(),
        batches: () => ({ [Symbol.asyncIterator]: batches }),
        [Symbol.asyncIterator]: async function* () {
          for await (const batch of batches()) {
            for (const ev of batch) {
              if (c.cancelled) return;
              yield ev;
            }
          }
        },
      };
    } catch (err) {
      call?.done();
      throw err;
    } finally {
      hostLabels.count(this.host, code, 'WATCH');
    }
  }

  private url(path: string, query: Record<string, string | number | boolean | undefined> | undefined): URL {
    const url = new URL(path, this.server);
    // A server URL with a path prefix (behind a proxy) keeps it.
    if (this.server.pathname !== '/') url.pathname = this.server.pathname.replace(/\/$/, '') + path;
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    return url;
  }

  private async headers(accept: string | undefined, contentType: string | undefined): Promise<Record<string, string>> {
    const h: Record<string, string> = { ...(await this.conn.authHeaders()), Accept: accept ?? 'application/json', 'User-Agent': this.userAgent };
    if (contentType) h['Content-Type'] = contentType;
    return h;
  }
}

// A watch closed by its owner (close() or the signal) ends quietly; any other end mid-stream is an
// error, and so is a line longer than `maxLineBytes`: the unfinished line is all that is buffered.
async function* watchBatches<T extends KubeObject>(res: ResponseHead, call: Cancellable, maxLineBytes: number, path: string): AsyncGenerator<WatchEvent<T>[]> {
  // Bytes, not text: a newline byte never occurs inside a UTF-8 sequence, and lengths are exact.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const tooLong = (): Error => new Error(`watch ${path}: an event line exceeds ${maxLineBytes} bytes`);
  const parse = (line: Buffer): WatchEvent<T> | undefined => {
    const text = line.toString('utf8');
    return text.trim() ? (JSON.parse(text) as WatchEvent<T>) : undefined;
  };
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      if (call.cancelled) return;
      call.touch();
      // Only the new chunk can hold a newline: a large object arriving in many chunks is not rescanned.
      const batch: WatchEvent<T>[] = [];
      let start = 0;
      for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
        if (pendingBytes + nl - start > maxLineBytes) throw tooLong();
        const ev = parse(pending.length ? Buffer.concat([...pending, chunk.subarray(start, nl)]) : chunk.subarray(start, nl));
        if (ev) batch.push(ev);
        pending = [];
        pendingBytes = 0;
        start = nl + 1;
      }
      if (start < chunk.length) {
        pending.push(chunk.subarray(start));
        pendingBytes += chunk.length - start;
        if (pendingBytes > maxLineBytes) throw tooLong();
      }
      if (batch.length) yield batch;
      if (call.cancelled) return;
    }
    const last = parse(Buffer.concat(pending));
    if (last) yield [last];
  } catch (err) {
    if (!call.cancelled) throw err;
  } finally {
    call.done();
    // Done reading, whether at the end, cancelled or failed: a stream still open is cancelled.
    call.close();
  }
}

/**
 * The whole body of a response, failing the call as soon as it is (or is announced to be) longer
 * than `maxBytes`: the rest is never read. A body that closes before its end is a lost connection.
 */
function readBody(head: ResponseHead, call: Cancellable, maxBytes: number, method: string, path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = (): void => {
      const err = new ResponseTooLargeError(`${method} ${path}: response body exceeds ${maxBytes} bytes`);
      reject(err);
      call.fail(err);
    };
    if (Number(head.headers['content-length']) > maxBytes) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    const body = head.body;
    body.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) tooLarge();
      else chunks.push(c);
    });
    body.on('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks));
    });
    body.on('error', reject);
    body.on('close', () => {
      if (!ended) reject(new ConnectionLostError(`${method} ${path}: the connection closed before the response ended`));
    });
  });
}

interface Cancellable {
  readonly cancelled: boolean;
  /** Restarts the timer (for watches: on every chunk). */
  touch(): void;
  cancel(): void;
  /** Ends it quietly when `signal` aborts, as cancel() does but without failing the exchange; the listener goes with done(). */
  endWhen(signal: AbortSignal): void;
  /** The reader is done with the body: whatever of the exchange is still open ends, quietly. */
  close(): void;
  /** Ends the call with an error of ours (destroying what is still in flight). */
  fail(err: Error): void;
  /** Finished: drop the timer and the signal listener. */
  done(): void;
}

/** Abort and timeout handling for one request: an abort ends its exchange only (see Exchange.abort). */
function cancellable(exchange: Exchange, signal: AbortSignal | undefined, timeoutMs: number | undefined, timeoutError: () => Error, fail: (err: Error) => void): Cancellable {
  let timer: NodeJS.Timeout | undefined;
  let cancelled = false;
  let finished = false;
  let endSignal: AbortSignal | undefined;
  const kill = (err: Error): void => {
    handle.done();
    exchange.abort(err);
    fail(err);
  };
  const onAbort = (): void => {
    cancelled = true;
    kill(new DOMException('The operation was aborted', 'AbortError'));
  };
  const end = (): void => {
    cancelled = true;
    handle.done();
    exchange.abort();
  };
  const handle: Cancellable = {
    get cancelled() {
      return cancelled || (signal?.aborted ?? false);
    },
    touch() {
      if (timeoutMs === undefined || finished) return;
      clearTimeout(timer);
      timer = setTimeout(() => kill(timeoutError()), timeoutMs);
    },
    cancel: onAbort,
    endWhen(s) {
      if (finished) return;
      endSignal = s;
      s.addEventListener('abort', end, { once: true });
    },
    close: () => exchange.abort(),
    fail: kill,
    done() {
      finished = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      endSignal?.removeEventListener('abort', end);
    },
  };
  if (signal?.aborted) queueMicrotask(onAbort);
  else signal?.addEventListener('abort', onAbort, { once: true });
  handle.touch();
  return handle;
}

function writeQuery(opts: WriteOptions): Record<string, string | undefined> {
  return { fieldManager: opts.fieldManager, dryRun: opts.dryRun ? 'All' : undefined };
}

function requireName(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error('object has no metadata.name');
  return name;
}

function toApiError(res: RawResponse, method: string, path: string): ApiError {
  const header = res.headers['retry-after'];
  const retryAfter = header !== undefined && /^\d+$/.test(header) ? Number(header) : undefined;
  let status: Status = {};
  try {
    const parsed: unknown = JSON.parse(res.body.toString('utf8'));
    if (parsed && typeof parsed === 'object' && (parsed as Status).kind === 'Status') status = parsed;
  } catch {
    // Not JSON (a proxy's HTML page, say): the code alone tells what happened.
  }
  return ApiError.fromStatus(status, res.status, method, path, retryAfter);
}

/** What a module that only reads a cluster needs of its client. */
export type ObjectReader = Pick<RestClient, 'server' | 'get' | 'getIfExists' | 'list' | 'listAll' | 'getStatus' | 'watch' | 'getRaw' | 'getJson'>;

/** What a module that writes objects needs of its client. */
export type ObjectWriter = Pick<RestClient, 'create' | 'update' | 'updateStatus' | 'patch' | 'patchStatus' | 'apply' | 'delete'>;

/** A client that reads and writes objects, without raw requests. */
export type ObjectClient = ObjectReader & ObjectWriter;

/**
 * A peer's client as its type: it reads, and asks what our credentials may do there, nothing else
 * (its RestClient also refuses any other request at run time).
 */
export type PeerReader = ObjectReader & AccessReviewer & Pick<RestClient, 'close'>;

/** What a permission pre-check needs. */
export type AccessReviewer = Pick<RestClient, 'reviewAccess'>;
