// The process's HTTP endpoints: /metrics (the shared prom-client registry), /healthz and /readyz
// with named checks, answered like controller-runtime's healthz handler ("[+]name ok" lines with
// ?verbose, 200 "ok" or 500 otherwise). Upstream serves metrics and probes on two ports; run two
// servers when that matters.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
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
}

export class HealthServer {
  private readonly opts: HealthServerOptions;
  private readonly healthChecks = new Map<string, Check>([['ping', () => undefined]]);
  private readonly readyChecks = new Map<string, Check>([['ping', () => undefined]]);
  private readonly log: Logger;
  private server: http.Server | undefined;

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
    const server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        this.log.error({ err }, 'health endpoint failed');
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    this.server = server;
    const { host, port } = parseAddress(this.opts.address);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const close = (): void => {
      server.close();
      server.closeAllConnections();
    };
    // An abort that came while we were binding has already fired; it would never reach a listener.
    if (signal.aborted) close();
    else signal.addEventListener('abort', close, { once: true });
    return (server.address() as AddressInfo).port;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/metrics' && this.opts.metrics !== false) {
      const body = await registry.metrics();
      res.writeHead(200, { 'Content-Type': registry.contentType });
      res.end(body);
      return;
    }
    const checks = this.opts.probes === false ? undefined : url.pathname === '/healthz' ? this.healthChecks : url.pathname === '/readyz' ? this.readyChecks : undefined;
    if (!checks) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found\n');
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

function parseAddress(address: string | number): { host: string | undefined; port: number } {
  if (typeof address === 'number') return { host: undefined, port: address };
  const i = address.lastIndexOf(':');
  const host = i > 0 ? address.slice(0, i).replace(/^\[|\]$/g, '') : undefined;
  return { host, port: Number(i >= 0 ? address.slice(i + 1) : address) };
}
