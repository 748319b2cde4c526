// `cluster-registry dashboard`: a read-only web page of the group as one cluster sees it, kept
// live from informer caches of that cluster's Clusters, ResourceSyncRules and ClusterFeatures.
// The page gets the whole view as JSON over Server-Sent Events whenever a cache changes, with the
// picture of who sees whom drawn from the same Clusters (group-graph.ts says what it can know).
//
// It shows what the user's kubeconfig may read to whoever can use it, so every request for data
// must carry a random token made at start, as a bearer token in its Authorization header: the
// printed URL hands it to the page, which keeps it in sessionStorage (its own origin, port
// included) and sends it with each request. No cookie: a browser sends a cookie for 127.0.0.1 to
// every port there, so another local server the user visits would get it. Another web page cannot
// send the header without the token (and a cross-origin request with it needs a preflight, which
// is refused), nor can another user of the machine. Bound to loopback, it also answers only
// requests that name a loopback host (no DNS rebinding). The page and its script and style hold
// no data and are served to anyone who asks.
//
// Given a tracer, it traces one object across the group when a page asks, as `trace` does: that
// reads the peers with the credentials this cluster holds for them, two traces at most at once.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type * as Http from 'node:http';
import { isIP } from 'node:net';
import { CLUSTER_FEATURES, CLUSTERS, RESOURCE_SYNC_RULES } from '../../core/api/resources.ts';
import type { Cluster, ClusterFeature, ResourceSyncRule } from '../../core/api/types.ts';
import { allowMethods, DEFAULT_SERVER_LIMITS, guard, HttpError, listenUntil, serverOptions, type ServerLimits } from '../../kube/http-server.ts';
import { errorMessage } from '../../core/rules/index.ts';
import { InformerFactory, resourceName, silentLogger, withoutManagedFields, type Informer, type Logger, type ObjectReader } from '../../kube/index.ts';
import { http } from '../../kube/node-http.ts';
import { groupGraph, type GroupGraph } from '../group-graph.ts';
import { groupView, type GroupView } from '../group-view.ts';
import { traceKind, type RuleObjects } from '../rule-objects.ts';
import { traceOutcome, type Trace } from '../trace-rows.ts';
import { MEMBER_DEADLINE_MS } from '../trace.ts';
import type { GroupTracer } from './group-tracer.ts';
import { PAGE_CSS, PAGE_HTML, PAGE_JS } from './assets.ts';

export interface DashboardOptions {
  rest: ObjectReader;
  /** Names the cluster on the page (its kubeconfig context, say). */
  viewer: string;
  /** An IP address to bind, or `localhost`. */
  host: string;
  /** 0 picks a free port. */
  port: number;
  logger?: Logger;
  /** Changes closer together than this go to the page as one (default 200 ms). */
  coalesceMs?: number;
  /** Pages open at once; more get 503 (default 32), so that no one can hold the process's memory. */
  maxViewers?: number;
  /** The access token (default: 24 random bytes); tests set their own. */
  token?: string;
  /** What answers a page's trace; none offers no trace. */
  tracer?: GroupTracer;
}

/** One cache the view is made of, and whether it can be trusted. */
export interface SourceState {
  /** The resource, e.g. `clusters.clusterregistry.k8s.cisco.com`. */
  resource: string;
  synced: boolean;
  /** Why its last LIST or WATCH failed (a CRD not installed, access denied). */
  error: string;
}

export interface DashboardState {
  /** When the view was made, ISO 8601. */
  at: string;
  view: GroupView;
  /** Each member's view of each other member, from the same Clusters: the views not Ready, bounded in bytes. */
  graph: GroupGraph;
  /** In the order of the page's tables: members, rules, features. */
  sources: SourceState[];
  /** Whether the page may ask for a trace. */
  tracing: boolean;
}

const HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

const ASSETS: Record<string, { type: string; body: string }> = {
  '/': { type: 'text/html; charset=utf-8', body: PAGE_HTML },
  '/app.js': { type: 'text/javascript; charset=utf-8', body: PAGE_JS },
  '/app.css': { type: 'text/css; charset=utf-8', body: PAGE_CSS },
};

/** Open pages by default. */
const MAX_VIEWERS = 32;
/** Room for every page's stream and a request or two of each beside it. */
const LIMITS: Readonly<ServerLimits> = { ...DEFAULT_SERVER_LIMITS, maxConnections: 2 * MAX_VIEWERS };
/** How often the caches' health is looked at. */
const SOURCES_CHECK_MS = 1_000;
/** Comments on an idle event stream, so that neither a proxy nor the browser takes it for dead. */
const KEEPALIVE_MS = 15_000;
/**
 * A page that reads slower than the view changes is sent no more frames while this much is
 * unsent; it gets the latest view once it has caught up. Every frame is the whole view, so
 * skipping loses nothing, and a page that never reads holds at most this much and one frame.
 */
const MAX_UNSENT_BYTES = 1024 * 1024;

/** Traces (and listings of a rule's objects) at once: each reads clusters; a page asks for one at a time. */
const MAX_TRACES = 2;
/**
 * All a trace the page asks for may take: each member's reads have their own deadline, and the
 * peers are connected to first. The request's socket waits that long, and a little more, for it:
 * nothing is written until it is done.
 */
export const TRACE_DEADLINE_MS = 2 * MEMBER_DEADLINE_MS;
const TRACE_SOCKET_MS = TRACE_DEADLINE_MS + 10_000;
/** Of a name or kind asked for: far above any Kubernetes name. */
const MAX_PARAM = 512;

/** An IP literal in a URL authority. */
const bracketed = (host: string) => (host.includes(':') ? `[${host}]` : host);

export class Dashboard {
  private readonly opts: DashboardOptions;
  private readonly log: Logger;
  private readonly token: string;
  private readonly clusters: Informer<Cluster>;
  private readonly rules: Informer<ResourceSyncRule>;
  private readonly features: Informer<ClusterFeature>;
  /** Open event streams, each with whether a view was skipped since it last caught up. */
  private readonly viewers = new Map<Http.ServerResponse, { behind: boolean }>();
  private pending: NodeJS.Timeout | undefined;
  private port = 0;
  private traces = 0;
  /** Aborts when the dashboard stops: what a request still reads stops with it. */
  private readonly stopped: AbortSignal;

  private constructor(opts: DashboardOptions, factory: InformerFactory, stopped: AbortSignal) {
    this.opts = opts;
    this.stopped = stopped;
    this.log = opts.logger ?? silentLogger;
    this.token = opts.token ?? randomBytes(24).toString('base64url');
    this.clusters = factory.forResource<Cluster>(CLUSTERS);
    this.rules = factory.forResource<ResourceSyncRule>(RESOURCE_SYNC_RULES);
    this.features = factory.forResource<ClusterFeature>(CLUSTER_FEATURES);
  }

  /** Starts the caches and the server; both stop when the signal aborts (and the caches when the start fails). */
  static async start(opts: DashboardOptions, signal: AbortSignal): Promise<Dashboard> {
    if (opts.host !== 'localhost' && isIP(opts.host) === 0) throw new Error(`--address must be an IP address or localhost, not "${opts.host}"`);
    const stop = new AbortController();
    const forward = () => stop.abort();
    signal.addEventListener('abort', forward, { once: true });
    const factory = new InformerFactory({ cluster: opts.viewer, rest: opts.rest, transform: withoutManagedFields, logger: opts.logger });
    const d = new Dashboard(opts, factory, stop.signal);
    const changed = { onAdd: () => d.changed(), onUpdate: () => d.changed(), onDelete: () => d.changed() };
    d.clusters.addEventHandler(changed);
    d.rules.addEventHandler(changed);
    d.features.addEventHandler(changed);
    factory.start(stop.signal);
    // A cache that syncs empty, or whose watch fails, calls no handler: the page learns of it from this check.
    let sources = '';
    const watchSources = setInterval(() => {
      const now = JSON.stringify(d.sources());
      if (now !== sources) d.changed();
      sources = now;
    }, SOURCES_CHECK_MS);
    stop.signal.addEventListener('abort', () => {
      clearInterval(watchSources);
      clearTimeout(d.pending);
      for (const res of d.viewers.keys()) res.end();
    }, { once: true });
    try {
      const server = http.createServer(serverOptions(LIMITS));
      guard(server, (req, res, url) => d.handle(req, res, url), { name: 'dashboard', limits: LIMITS, log: d.log });
      d.port = await listenUntil(server, `${bracketed(opts.host)}:${opts.port}`, stop.signal);
      return d;
    } catch (err) {
      signal.removeEventListener('abort', forward);
      stop.abort();
      throw err;
    }
  }

  /** Where to open the page, with the access token (the page takes it from there; the server reads it only from the header). */
  get url(): string {
    const host = this.opts.host === '0.0.0.0' || this.opts.host === '::' ? 'localhost' : bracketed(this.opts.host);
    return `http://${host}:${this.port}/?token=${this.token}`;
  }

  state(): DashboardState {
    const clusters = this.clusters.store.list();
    return {
      at: new Date().toISOString(),
      view: groupView(this.opts.viewer, { clusters, rules: this.rules.store.list(), features: this.features.store.list() }),
      graph: groupGraph(clusters),
      sources: this.sources(),
      tracing: this.opts.tracer !== undefined,
    };
  }

  private sources(): SourceState[] {
    const source = (resource: string, i: Pick<Informer, 'hasSynced' | 'lastError'>): SourceState => ({ resource, synced: i.hasSynced(), error: i.lastError ?? '' });
    return [source(resourceName(CLUSTERS), this.clusters), source(resourceName(RESOURCE_SYNC_RULES), this.rules), source(resourceName(CLUSTER_FEATURES), this.features)];
  }

  /** A cache changed: every open page gets the new view, at most once per coalescing window. */
  private changed(): void {
    if (this.pending || this.viewers.size === 0) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      const message = frame(this.state());
      for (const [res, viewer] of this.viewers) {
        if (res.writableLength < MAX_UNSENT_BYTES) res.write(message);
        else viewer.behind = true;
      }
    }, this.opts.coalesceMs ?? 200);
  }

  private async handle(req: Http.IncomingMessage, res: Http.ServerResponse, url: URL): Promise<void> {
    if (!hostAllowed(req.headers.host, this.opts.host)) throw new HttpError(421, 'this dashboard answers only requests for a loopback host');
    allowMethods(req, ['GET', 'HEAD']);
    const asset = ASSETS[url.pathname];
    if (asset) {
      res.writeHead(200, { ...HEADERS, 'Content-Type': asset.type });
      return void res.end(req.method === 'HEAD' ? undefined : asset.body);
    }
    if (!sameToken(bearer(req.headers.authorization), this.token)) {
      throw new HttpError(401, 'open the URL the dashboard printed: it carries the access token', { 'WWW-Authenticate': 'Bearer realm="cluster-registry dashboard"' });
    }
    // The page's data, for scripts: the same JSON each event carries.
    if (url.pathname === '/api/view') {
      res.writeHead(200, { ...HEADERS, 'Content-Type': 'application/json' });
      return void res.end(req.method === 'HEAD' ? undefined : JSON.stringify(this.state()));
    }
    if (url.pathname === '/api/events') return this.stream(req, res);
    if (url.pathname === '/api/rule-objects') return this.answer(req, res, (tracer, signal) => this.ruleObjects(tracer, url, signal));
    if (url.pathname === '/api/trace') return this.answer(req, res, (tracer, signal) => this.trace(tracer, url, signal));
    throw new HttpError(404, 'not found');
  }

  /**
   * Answers a request that reads clusters with what `read` returns, as JSON; what it reads stops
   * when the page hangs up or the dashboard stops. A failure that is not the page's is its answer
   * (422), as the command would print it.
   */
  private async answer(req: Http.IncomingMessage, res: Http.ServerResponse, read: (tracer: GroupTracer, signal: AbortSignal) => Promise<unknown>): Promise<void> {
    allowMethods(req, ['GET']);
    const tracer = this.opts.tracer;
    if (!tracer) throw new HttpError(404, 'tracing is off: the dashboard was started with --no-trace, or listens beyond loopback without --trace');
    if (this.traces >= MAX_TRACES) throw new HttpError(429, 'traces are running: ask again once one is done', { 'Retry-After': '5' });
    // The listener's idle bound is shorter than a trace may take, and nothing is written before it ends.
    req.socket.setTimeout(TRACE_SOCKET_MS);
    const gone = new AbortController();
    const hangUp = () => gone.abort();
    res.once('close', hangUp);
    let body: unknown;
    this.traces++;
    try {
      body = await read(tracer, AbortSignal.any([gone.signal, this.stopped, AbortSignal.timeout(TRACE_DEADLINE_MS)]));
    } catch (err) {
      // No one is left to answer.
      if (gone.signal.aborted) return;
      if (err instanceof HttpError) throw err;
      if (this.stopped.aborted) throw new HttpError(503, 'the dashboard is stopping');
      throw new HttpError(422, errorMessage(err));
    } finally {
      this.traces--;
      res.off('close', hangUp);
    }
    res.writeHead(200, { ...HEADERS, 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  /** The rule the request names, of this cluster. */
  private rule(url: URL): ResourceSyncRule {
    const name = param(url, 'rule');
    const rule = this.rules.store.getByName(undefined, name);
    if (!rule) throw new HttpError(404, `no ResourceSyncRule ${name} here`);
    return rule;
  }

  /** The objects here a rule (of this cluster) concerns: those a trace can be asked of. */
  private ruleObjects(tracer: GroupTracer, url: URL, signal: AbortSignal): Promise<RuleObjects> {
    return tracer.objectsOf(this.rule(url), this.clusters.store.list(), signal);
  }

  /**
   * One object of a rule's kind traced across the group, as `trace` prints it with -o json, and
   * what its exit code would say. Only the kinds of this cluster's rules: the page traces what a
   * rule syncs, not whatever its token's holder names.
   */
  private async trace(tracer: GroupTracer, url: URL, signal: AbortSignal): Promise<Trace & { outcome: ReturnType<typeof traceOutcome> }> {
    const rule = this.rule(url);
    const kind = param(url, 'kind');
    const gvk = rule.spec?.groupVersionKind;
    const syncs = gvk?.kind ? traceKind({ kind: gvk.kind, group: gvk.group ?? '' }) : 'no kind';
    if (kind !== syncs) throw new HttpError(400, `rule ${rule.metadata.name ?? ''} syncs ${syncs}, not ${kind}`);
    // A cluster-scoped kind takes no namespace: the one given is not read.
    const t = await tracer.trace({ kind, name: param(url, 'name'), namespace: param(url, 'namespace', '') }, signal);
    return { ...t, outcome: traceOutcome(t) };
  }

  private stream(req: Http.IncomingMessage, res: Http.ServerResponse): void {
    if (this.viewers.size >= (this.opts.maxViewers ?? MAX_VIEWERS)) throw new HttpError(503, 'too many open pages', { 'Retry-After': '10' });
    res.writeHead(200, { ...HEADERS, 'Content-Type': 'text/event-stream' });
    if (req.method === 'HEAD') return void res.end();
    const viewer = { behind: false };
    this.viewers.set(res, viewer);
    res.write(frame(this.state()));
    // A page that fell behind gets the view as it is now once it has caught up.
    res.on('drain', () => {
      if (!viewer.behind) return;
      viewer.behind = false;
      res.write(frame(this.state()));
    });
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    res.on('close', () => {
      clearInterval(keepalive);
      this.viewers.delete(res);
    });
    this.log.debug({ viewers: this.viewers.size }, 'a page opened the event stream');
  }
}

/** A query parameter the request must carry (unless it has a default), of a name's length. */
function param(url: URL, name: string, fallback?: string): string {
  const v = url.searchParams.get(name) ?? fallback;
  if (v === undefined || (v === '' && fallback === undefined)) throw new HttpError(400, `say which ${name}: ?${name}=…`);
  if (v.length > MAX_PARAM) throw new HttpError(400, `${name} is longer than ${MAX_PARAM} characters`);
  return v;
}

/** One Server-Sent Event; JSON has no raw newline, so one data line carries it. */
function frame(state: DashboardState): string {
  return `event: view\ndata: ${JSON.stringify(state)}\n\n`;
}

/** The token of an `Authorization: Bearer <token>` header. */
function bearer(header: string | undefined): string | undefined {
  return /^Bearer +(\S+)$/i.exec(header ?? '')?.[1];
}

function sameToken(given: string | undefined, token: string): boolean {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether an address to listen on (an IP address or localhost) is reached from this machine only. */
export function loopback(host: string): boolean {
  return host === 'localhost' || (isIP(host) !== 0 && (host.startsWith('127.') || host === '::1'));
}

/** Bound to loopback, only requests for a loopback name or address; bound elsewhere, any (the token guards it). */
export function hostAllowed(hostHeader: string | undefined, boundHost: string): boolean {
  if (!loopback(boundHost)) return true;
  if (!hostHeader) return false;
  const name = hostHeader.replace(/:\d+$/, '').toLowerCase();
  return LOOPBACK_NAMES.has(name) || /^127(\.\d{1,3}){3}$/.test(name);
}
