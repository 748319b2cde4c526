// The process's HTTP endpoints: /metrics (the shared prom-client registry), /healthz and /readyz
// with named checks, answered like controller-runtime's healthz handler ("[+]name ok" lines with
// ?verbose, 200 "ok" or 500 otherwise). Upstream serves metrics and probes on two ports; run two
// servers when that matters. It runs behind the guard of every server of ours (http-server.ts).
import type * as Http from 'node:http';
import { http } from './node-http.ts';
import { allowMethods, DEFAULT_SERVER_LIMITS, guard, HttpError, listenUntil, serverOptions, type ServerLimits } from './http-server.ts';
import type { Logger } from './log.ts';
import { silentLogger } from './log.ts';
import { registry } from './metrics.ts';

/** Resolves (or returns) when healthy; throws or rejects with the reason otherwise. */
export type Check = () => void | Promise<void>;

export interface HealthServerOptions {
  /** `host:port`, `:port` or a port; `:0` picks a free port. */
  address: string | number;
  /** Serve /metrics (default true). */
  metrics?: boolean;
  /** Serve /healthz and /readyz (default true). */
  probes?: boolean;
  logger?: Logger;
  /** Overrides of DEFAULT_SERVER_LIMITS. */
  limits?: Partial<ServerLimits>;
}

export class HealthServer {
  private readonly opts: HealthServerOptions;
  private readonly healthChecks = new Map<string, Check>([['ping', () => undefined]]);
  private readonly readyChecks = new Map<string, Check>([['ping', () => undefined]]);
  private readonly log: Logger;
  private server: Http.Server | undefined;

  constructor(opts: HealthServerOptions) {
    this.opts = opts;
    this.log = opts.logger ?? silentLogger;
  }

  addHealthCheck(name: string, check: Check): void {
    this.healthChecks.set(name, check);
  }

  addReadyCheck(name: string, check: Check): void {
    this.readyChecks.set(name, check);
  }

  /** Listens; resolves with the bound port. Closes when the signal aborts. */
  async start(signal: AbortSignal): Promise<number> {
    const limits = { ...DEFAULT_SERVER_LIMITS, ...this.opts.limits };
    const server = http.createServer(serverOptions(limits));
    guard(server, (req, res, url) => this.handle(req, res, url), { name: this.opts.probes === false ? 'metrics' : 'health', limits, log: this.log });
    this.server = server;
    return listenUntil(server, this.opts.address, signal);
  }

  private async handle(req: Http.IncomingMessage, res: Http.ServerResponse, url: URL): Promise<void> {
    const metrics = url.pathname === '/metrics' && this.opts.metrics !== false;
    const checks = this.opts.probes === false ? undefined : url.pathname === '/healthz' ? this.healthChecks : url.pathname === '/readyz' ? this.readyChecks : undefined;
    if (!metrics && !checks) throw new HttpError(404, 'not found');
    allowMethods(req, ['GET', 'HEAD']);
    if (!checks) {
      const body = await registry.metrics();
      res.writeHead(200, { 'Content-Type': registry.contentType });
      res.end(body);
      return;
    }
    const excluded = new Set(url.searchParams.getAll('exclude'));
    const lines: string[] = [];
    let ok = true;
    for (const [name, check] of checks) {
      if (excluded.has(name)) continue;
      try {
        await check();
        lines.push(`[+]${name} ok`);
      } catch (err) {
        ok = false;
        // The reason goes to the log only: probe output is unauthenticated.
        this.log.info({ err, check: name }, 'check failed');
        lines.push(`[-]${name} failed: reason withheld`);
      }
    }
    res.writeHead(ok ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    if (url.searchParams.has('verbose') || !ok) res.end(`${lines.join('\n')}\n${url.pathname.slice(1)} check ${ok ? 'passed' : 'failed'}\n`);
    else res.end('ok');
  }
}
