// `cluster-registry dashboard`: a read-only web page of the group as one cluster sees it, kept
// live from informer caches of that cluster's Clusters, ResourceSyncRules and ClusterFeatures.
// The page gets the whole view as JSON over Server-Sent Events whenever a cache changes.
//
// It shows what the user's kubeconfig may read to whoever reaches its port, so it binds loopback
// by default, and there it answers only requests that name a loopback host: a web page the user
// visits cannot point a DNS name of its own at 127.0.0.1 and read the view (DNS rebinding).
import type * as Http from 'node:http';
import { isIP } from 'node:net';
import { CLUSTER_FEATURES, CLUSTERS, RESOURCE_SYNC_RULES } from '../../core/api/resources.ts';
import type { Cluster, ClusterFeature, ResourceSyncRule } from '../../core/api/types.ts';
import { allowMethods, DEFAULT_SERVER_LIMITS, guard, HttpError, listenUntil, serverOptions } from '../../kube/health.ts';
import { InformerFactory, silentLogger, withoutManagedFields, type Informer, type Logger, type RestClient } from '../../kube/index.ts';
import { http } from '../../kube/node-http.ts';
import { groupView, type GroupView } from '../group-view.ts';
import { PAGE_CSS, PAGE_HTML, PAGE_JS } from './assets.ts';

export interface DashboardOptions {
  rest: RestClient;
  /** Names the cluster on the page (its kubeconfig context, say). */
  viewer: string;
  /** Interface to bind; loopback unless the user says otherwise. */
  host: string;
  /** 0 picks a free port. */
  port: number;
  logger?: Logger;
  /** Changes closer together than this go to the page as one (default 200 ms). */
  coalesceMs?: number;
  /** Pages open at once; more get 503 (default 32), so that no one can hold the process's memory. */
  maxViewers?: number;
}

/** One cache the view is made of, and whether it can be trusted. */
export interface SourceState {
  resource: string;
  synced: boolean;
  /** Why its last LIST or WATCH failed (a CRD not installed, access denied). */
  error: string;
}

export interface DashboardState {
  /** When the view was made, ISO 8601. */
  at: string;
  view: GroupView;
  sources: SourceState[];
}

const HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

const ASSETS: Record<string, { type: string; body: string }> = {
  '/': { type: 'text/html; charset=utf-8', body: PAGE_HTML },
  '/app.js': { type: 'text/javascript; charset=utf-8', body: PAGE_JS },
  '/app.css': { type: 'text/css; charset=utf-8', body: PAGE_CSS },
};

/** How often the caches' health is looked at. */
const SOURCES_CHECK_MS = 1_000;

/** Comments on an idle event stream, so that neither a proxy nor the browser takes it for dead. */
const KEEPALIVE_MS = 15_000;

export class Dashboard {
  private readonly opts: DashboardOptions;
  private readonly log: Logger;
  private readonly clusters: Informer<Cluster>;
  private readonly rules: Informer<ResourceSyncRule>;
  private readonly features: Informer<ClusterFeature>;
  private readonly viewers = new Set<Http.ServerResponse>();
  private pending: NodeJS.Timeout | undefined;
  private port = 0;

  private constructor(opts: DashboardOptions, factory: InformerFactory) {
    this.opts = opts;
    this.log = opts.logger ?? silentLogger;
    this.clusters = factory.forResource<Cluster>(CLUSTERS);
    this.rules = factory.forResource<ResourceSyncRule>(RESOURCE_SYNC_RULES);
    this.features = factory.forResource<ClusterFeature>(CLUSTER_FEATURES);
  }

  /** Starts the caches and the server; both stop when the signal aborts. */
  static async start(opts: DashboardOptions, signal: AbortSignal): Promise<Dashboard> {
    const factory = new InformerFactory({ cluster: opts.viewer, rest: opts.rest, transform: withoutManagedFields, logger: opts.logger });
    const d = new Dashboard(opts, factory);
    const changed = { onAdd: () => d.changed(), onUpdate: () => d.changed(), onDelete: () => d.changed() };
    d.clusters.addEventHandler(changed);
    d.rules.addEventHandler(changed);
    d.features.addEventHandler(changed);
    factory.start(signal);
    // A cache that syncs empty, or whose watch fails, calls no handler: the page learns of it from this check.
    let sources = '';
    const watchSources = setInterval(() => {
      const now = JSON.stringify(d.sources());
      if (now !== sources) d.changed();
      sources = now;
    }, SOURCES_CHECK_MS);
    const server = http.createServer(serverOptions(DEFAULT_SERVER_LIMITS));
    guard(server, (req, res, url) => d.handle(req, res, url), d.log);
    d.port = await listenUntil(server, `${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`, signal);
    signal.addEventListener('abort', () => {
      clearInterval(watchSources);
      clearTimeout(d.pending);
      for (const res of d.viewers) res.end();
    }, { once: true });
    return d;
  }

  get url(): string {
    const host = this.opts.host.includes(':') ? `[${this.opts.host}]` : this.opts.host;
    return `http://${host === '0.0.0.0' || host === '[::]' ? 'localhost' : host}:${this.port}/`;
  }

  state(): DashboardState {
    return {
      at: new Date().toISOString(),
      view: groupView(this.opts.viewer, { clusters: this.clusters.store.list(), rules: this.rules.store.list(), features: this.features.store.list() }),
      sources: this.sources(),
    };
  }

  private sources(): SourceState[] {
    const source = (resource: string, i: Pick<Informer, 'hasSynced' | 'lastError'>): SourceState => ({ resource, synced: i.hasSynced(), error: i.lastError ?? '' });
    return [source('clusters', this.clusters), source('resourcesyncrules', this.rules), source('clusterfeatures', this.features)];
  }

  /** A cache changed: every open page gets the new view, at most once per coalescing window. */
  private changed(): void {
    if (this.pending || this.viewers.size === 0) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      const message = frame(this.state());
      for (const res of this.viewers) res.write(message);
    }, this.opts.coalesceMs ?? 200);
  }

  private handle(req: Http.IncomingMessage, res: Http.ServerResponse, url: URL): void {
    if (!hostAllowed(req.headers.host, this.opts.host)) throw new HttpError(421, 'this dashboard answers only requests for a loopback host');
    allowMethods(req, ['GET', 'HEAD']);
    const asset = ASSETS[url.pathname];
    if (asset) {
      res.writeHead(200, { ...HEADERS, 'Content-Type': asset.type });
      return void res.end(req.method === 'HEAD' ? undefined : asset.body);
    }
    if (url.pathname === '/api/view') {
      res.writeHead(200, { ...HEADERS, 'Content-Type': 'application/json' });
      return void res.end(req.method === 'HEAD' ? undefined : JSON.stringify(this.state()));
    }
    if (url.pathname === '/api/events') return this.stream(req, res);
    throw new HttpError(404, 'not found');
  }

  private stream(req: Http.IncomingMessage, res: Http.ServerResponse): void {
    if (this.viewers.size >= (this.opts.maxViewers ?? 32)) throw new HttpError(503, 'too many open pages', { 'Retry-After': '10' });
    res.writeHead(200, { ...HEADERS, 'Content-Type': 'text/event-stream' });
    if (req.method === 'HEAD') return void res.end();
    // A stream is meant to stay open: not bound by the time a request may take.
    req.socket.setTimeout(0);
    this.viewers.add(res);
    res.write(frame(this.state()));
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    res.on('close', () => {
      clearInterval(keepalive);
      this.viewers.delete(res);
    });
    this.log.debug({ viewers: this.viewers.size }, 'a page opened the event stream');
  }
}

/** One Server-Sent Event; JSON has no raw newline, so one data line carries it. */
function frame(state: DashboardState): string {
  return `event: view\ndata: ${JSON.stringify(state)}\n\n`;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Bound to loopback, only requests for a loopback name or address; bound elsewhere, the user chose to expose it. */
export function hostAllowed(hostHeader: string | undefined, boundHost: string): boolean {
  const loopback = boundHost === 'localhost' || (isIP(boundHost) !== 0 && (boundHost.startsWith('127.') || boundHost === '::1'));
  if (!loopback) return true;
  if (!hostHeader) return false;
  const name = hostHeader.replace(/:\d+$/, '').toLowerCase();
  return LOOPBACK_NAMES.has(name) || /^127(\.\d{1,3}){3}$/.test(name);
}
