// The process's HTTP endpoints: /metrics (the shared prom-client registry), /healthz and /readyz
// with named checks, answered like controller-runtime's healthz handler ("[+]name ok" lines with
// ?verbose, 200 "ok" or 500 otherwise). Upstream serves metrics and probes on two ports; run two
// servers when that matters.
//
// Also the guard every HTTP server of the process runs behind (these and the webhook's): whoever
// reaches a port can send anything, and no request may end the process or hold it for long.
import type * as Http from 'node:http';
import { http } from './node-http.ts';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from './log.ts';
import { silentLogger } from './log.ts';
import { registry } from './metrics.ts';

/** Resolves (or returns) when healthy; throws or rejects with the reason otherwise. */
export type Check = () => void | Promise<void>;

/** What one client can make a server hold. */
export interface ServerLimits {
  /** The request line and headers together. */
  maxHeaderBytes: number;
  /** From a request's first byte (on a new connection: from its start) to its last header; also bounds a TLS handshake. */
  headersTimeoutMs: number;
  /** From a request's first byte (on a new connection: from its start) to the last byte of its body. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
}

export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = {
  // Room for a bearer token; set here so that a --max-http-header-size for Node cannot raise it.
  maxHeaderBytes: 16 * 1024,
  // Probes, scrapers and the API server send their headers at once; only a stalling client needs longer.
  headersTimeoutMs: 10_000,
  // The API server gives up on a webhook after at most 30 s; a request still arriving then is moot.
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
};

/** Options for http.createServer or https.createServer that enforce `limits`. */
export function serverOptions(limits: ServerLimits): Http.ServerOptions & { handshakeTimeout: number } {
  return {
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node checks the two timeouts above only when it sweeps its connections; its default sweep
    // (every 30 s) would let a stalling client stay several times longer.
    connectionsCheckingInterval: Math.ceil(Math.min(1_000, limits.headersTimeoutMs / 4)),
    // TLS only: the request timeouts start once the handshake is done.
    handshakeTimeout: limits.headersTimeoutMs,
  };
}

/** The client got the request wrong: answered with `status` and `message`, logged at debug only. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

/** Throws a 405 unless the request's method is one of `methods`. */
export function allowMethods(req: Http.IncomingMessage, methods: readonly string[]): void {
  if (!methods.includes(req.method ?? '')) throw new HttpError(405, 'method not allowed', { Allow: methods.join(', ') });
}

/** Serves one request; throws or rejects with an HttpError for the client's mistakes. */
export type Handler = (req: Http.IncomingMessage, res: Http.ServerResponse, url: URL) => void | Promise<void>;

/**
 * Serves `handle` on `server` so that no client can crash the process: a throw or rejection is
 * answered (an HttpError with its status, anything else with 500 and an error log), a request
 * Node cannot parse gets a 4xx and loses its connection, and socket errors are only logged.
 * Log lines never carry a request's headers or body: they may hold credentials.
 */
export function guard(server: Http.Server | https.Server, handle: Handler, log: Logger): void {
  server.on('request', (req: Http.IncomingMessage, res: Http.ServerResponse) => {
    // A client that hung up cannot be answered; that is not an error of ours.
    res.on('error', (err) => log.debug({ reason: err.message }, 'writing a response failed'));
    const serve = async (): Promise<void> => {
      const url = URL.parse(req.url ?? '/', 'http://endpoint');
      if (!url) throw new HttpError(400, 'malformed request target');
      await handle(req, res, url);
    };
    serve()
      .catch((err: unknown) => answerFailure(res, err, log))
      // Answering failed too (a status or header of ours Node refuses): ending the connection is what is left.
      .catch((err: unknown) => {
        log.error({ err }, 'answering a failed request failed');
        res.destroy();
      });
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    log.debug({ code: err.code, reason: err.message }, 'malformed request or broken connection');
    if (socket.writable && err.code !== 'ECONNRESET') socket.write(clientErrorResponse(err.code));
    socket.destroy();
  });
  // Once listening, a server error is a failed accept (out of file descriptors, say): keep serving.
  server.once('listening', () => server.on('error', (err) => log.error({ err }, 'accepting a connection failed')));
}

function answerFailure(res: Http.ServerResponse, err: unknown, log: Logger): void {
  const clientFault = err instanceof HttpError && err.status < 500;
  // Client mistakes are routine on an open port: at debug, a flood of them cannot fill the log.
  if (clientFault) log.debug({ status: err.status, reason: err.message }, 'request rejected');
  else log.error({ err }, 'serving a request failed');
  if (res.headersSent) {
    // Half an answer is worse than none: the client sees the connection break.
    if (!res.writableEnded) res.destroy();
    return;
  }
  const status = err instanceof HttpError ? err.status : 500;
  res.writeHead(status, {
    ...(err instanceof HttpError ? err.headers : {}),
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    // How much of the request is still unread is unknown; the connection cannot be reused.
    Connection: 'close',
  });
  if (!res.req.complete) {
    // Node would read the rest of the body to throw it away: it stays unread instead (taking it
    // makes the request count as consumed, and pausing it stops the socket once its buffer fills).
    res.req.read(0);
    res.req.pause();
    lingerBeforeClosing(res.req.socket);
  }
  res.end(`${clientFault ? err.message : 'internal error'}\n`);
}

/** How long a connection whose request was left half read stays open after its answer. */
export const LINGER_MS = 1_000;

/**
 * Closing a socket with unread input makes the kernel send a reset, and a client that is still
 * writing its body may then lose our answer before reading it (a 413 becomes "connection reset").
 * So the answer is followed by our half of the close, and the socket is kept a moment (reading
 * nothing more, so the client's writes stall) for the client to read the answer before it goes.
 */
function lingerBeforeClosing(socket: Duplex): void {
  // Node calls this once the answer is written on a connection that must not be reused.
  Object.assign(socket, {
    destroySoon(): void {
      socket.end();
      const timer = setTimeout(() => socket.destroy(), LINGER_MS);
      socket.once('close', () => clearTimeout(timer));
    },
  });
}

// Written straight to the socket: Node has no request or response for what it could not parse.
function clientErrorResponse(code: string | undefined): string {
  const status = code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
  return `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`;
}

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
    const server = http.createServer(serverOptions({ ...DEFAULT_SERVER_LIMITS, ...this.opts.limits }));
    guard(server, (req, res, url) => this.handle(req, res, url), this.log);
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

/** Binds `server` to `address` (`host:port`, `:port` or a port); resolves with the bound port. Closes, dropping open connections, when the signal aborts. */
export async function listenUntil(server: Http.Server | https.Server, address: string | number, signal: AbortSignal): Promise<number> {
  const { host, port } = parseAddress(address);
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

function parseAddress(address: string | number): { host: string | undefined; port: number } {
  if (typeof address === 'number') return { host: undefined, port: address };
  const i = address.lastIndexOf(':');
  const host = i > 0 ? address.slice(0, i).replace(/^\[|\]$/g, '') : undefined;
  return { host, port: Number(i >= 0 ? address.slice(i + 1) : address) };
}
