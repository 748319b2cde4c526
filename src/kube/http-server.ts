// The guard every HTTP server of the process runs behind (the health and metrics server, the
// webhook's and the dashboard's): whoever reaches a port can send anything, and no request may
// end the process or hold it for long; and a budget per listener, so that what all its clients
// together make it hold (connections, request bodies) stays bounded whoever they are.
import type * as Http from 'node:http';
import type https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from './log.ts';
import { counter } from './metrics.ts';

/** What one client, and all of them together, can make a server hold. */
export interface ServerLimits {
  /** The request line and headers together. */
  maxHeaderBytes: number;
  /** From a request's first byte to its last header; also bounds a TLS handshake. */
  headersTimeoutMs: number;
  /** From a request's first byte to the last byte of its body. */
  requestTimeoutMs: number;
  /** An idle connection (between requests, or new and unused) is closed after this. */
  keepAliveTimeoutMs: number;
  /** A connection with a request under way that sends and takes nothing for this long is closed (a client that stopped reading its answer). */
  idleTimeoutMs: number;
  /** Connections open at once; more are closed as they arrive, before anything is read from them. */
  maxConnections: number;
  /** The largest request body a handler reads; a longer one is answered 413 without reading the rest. */
  maxBodyBytes: number;
  /**
   * What each request may buffer of its body on its own account: at most one request per
   * connection is read at a time, so these are bounded by `maxConnections`, and a small request
   * is never refused because others hold the shared budget.
   */
  ownBodyBytes: number;
  /** Bytes of request bodies past their own accounts, held at once by all requests together; past it, 503. */
  maxBufferedBytes: number;
}

export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = {
  // Room for a bearer token; set here so that a --max-http-header-size for Node cannot raise it.
  maxHeaderBytes: 16 * 1024,
  // Probes, scrapers and the API server send their headers at once; only a stalling client needs longer.
  headersTimeoutMs: 10_000,
  // The API server gives up on a webhook after at most 30 s; a request still arriving then is moot.
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  // Longer than anything of ours waits between writes (the dashboard's stream comments every 15 s).
  idleTimeoutMs: 30_000,
  // Probes and scrapers use a few at a time; each open one costs about 60 KiB.
  maxConnections: 64,
  // Probes, metrics and the dashboard read no bodies: these only bound what a handler could read.
  maxBodyBytes: 64 * 1024,
  ownBodyBytes: 64 * 1024,
  maxBufferedBytes: 0,
};

/** Options for http.createServer or https.createServer that enforce `limits` (guard enforces the rest). */
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

/** The client got the request wrong, or the listener will not take it now: answered with `status` and `message`, logged at debug only. */
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

/** Reads the request's body within the listener's budget; rejects with a 413 or 503 HttpError past it. */
export type BodyReader = () => Promise<Buffer>;

/** Serves one request; throws or rejects with an HttpError for the client's mistakes. */
export type Handler = (req: Http.IncomingMessage, res: Http.ServerResponse, url: URL, readBody: BodyReader) => void | Promise<void>;

/** Why a listener refused something: `connections` and `busy` mean it is at its budget. */
export type Refusal = 'connections' | 'busy' | 'too_large' | 'timeout';

const refusals = counter({
  name: 'cluster_registry_http_refusals_total',
  help: 'Connections and requests a listener refused or cut off: past its connection cap, its request body budget, its body cap, or its timeouts.',
  labelNames: ['listener', 'reason'],
});

/** One request's share of its listener's body budget. */
export interface BodyAccount {
  /** Takes `bytes` more; says why not (and takes nothing) when they do not fit. */
  take(bytes: number): 'too_large' | 'busy' | undefined;
  /** Gives back all it took: the request is over. */
  release(): void;
}

/** The bytes of request bodies one listener holds: each request's own allowance, then a shared budget. */
export class BodyBudget {
  private readonly limits: Pick<ServerLimits, 'maxBodyBytes' | 'ownBodyBytes' | 'maxBufferedBytes'>;
  private sharedBytes = 0;

  constructor(limits: Pick<ServerLimits, 'maxBodyBytes' | 'ownBodyBytes' | 'maxBufferedBytes'>) {
    this.limits = limits;
  }

  /** Bytes of the shared budget in use. */
  get shared(): number {
    return this.sharedBytes;
  }

  /** An account for a new request. */
  open(): BodyAccount {
    let held = 0;
    let charged = 0;
    return {
      take: (bytes) => {
        const total = held + bytes;
        if (total > this.limits.maxBodyBytes) return 'too_large';
        const more = Math.max(0, total - this.limits.ownBodyBytes) - charged;
        if (this.sharedBytes + more > this.limits.maxBufferedBytes) return 'busy';
        this.sharedBytes += more;
        charged += more;
        held = total;
        return undefined;
      },
      release: () => {
        this.sharedBytes -= charged;
        charged = 0;
        held = 0;
      },
    };
  }
}

/** A listener: its name (a metric label), its limits, where it logs. */
export interface Listener {
  readonly name: string;
  readonly limits: ServerLimits;
  readonly log: Logger;
}

/** How often a listener at its budget says so in the log; the metric counts every refusal. */
const REFUSAL_LOG_INTERVAL_MS = 30_000;

/** Counts refusals, and says in the log, at most once per interval, that the listener is at its budget. */
function refusalReporter(listener: Listener): (reason: Refusal) => void {
  const since = new Map<Refusal, number>();
  let loggedAt = -Infinity;
  return (reason) => {
    refusals.inc({ listener: listener.name, reason });
    // A body too large or too slow is that client's own matter: logged at debug with its request.
    if (reason !== 'connections' && reason !== 'busy') return;
    since.set(reason, (since.get(reason) ?? 0) + 1);
    const now = performance.now();
    if (now - loggedAt < REFUSAL_LOG_INTERVAL_MS) return;
    loggedAt = now;
    const { maxConnections, maxBufferedBytes } = listener.limits;
    listener.log.warn({ listener: listener.name, refused: Object.fromEntries(since), maxConnections, maxBufferedBytes }, 'listener over budget');
    since.clear();
  };
}

/**
 * Serves `handle` on `server` within the listener's budget, so that no client can crash the
 * process or make it hold much: a throw or rejection is answered (an HttpError with its status,
 * anything else with 500 and an error log), a request Node cannot parse gets a 4xx and loses its
 * connection, socket errors are only logged, connections past the cap are closed unread, and
 * request bodies are read only through the reader the handler is given. Log lines never carry a
 * request's headers or body: they may hold credentials.
 */
export function guard(server: Http.Server | https.Server, handle: Handler, listener: Listener): void {
  const { log, limits } = listener;
  const refused = refusalReporter(listener);
  const budget = new BodyBudget(limits);
  server.maxConnections = limits.maxConnections;
  server.timeout = limits.idleTimeoutMs;
  server.on('drop', () => refused('connections'));
  server.on('request', (req: Http.IncomingMessage, res: Http.ServerResponse) => {
    // A client that hung up cannot be answered; that is not an error of ours.
    res.on('error', (err) => log.debug({ reason: err.message }, 'writing a response failed'));
    unused.used(req.socket);
    const account = budget.open();
    // Answered or broken off: what the request held goes back to the budget.
    res.once('close', () => account.release());
    const serve = async (): Promise<void> => {
      const url = URL.parse(req.url ?? '/', 'http://endpoint');
      if (!url) throw new HttpError(400, 'malformed request target');
      await handle(req, res, url, () => readBody(req, account, limits.maxBodyBytes, refused));
    };
    serve()
      .catch((err: unknown) => answerFailure(res, err, log))
      // Answering failed too (a status or header of ours Node refuses): ending the connection is what is left.
      .catch((err: unknown) => {
        log.error({ err }, 'answering a failed request failed');
        res.destroy();
      });
  });
  const unused = new UnusedConnections(limits, () => refused('timeout'));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && (socket as Socket).bytesRead === 0) {
      unused.hold(socket as Socket);
      return;
    }
    log.debug({ code: err.code, reason: err.message }, 'malformed request or broken connection');
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') refused('timeout');
    if (socket.writable && err.code !== 'ECONNRESET') socket.write(clientErrorResponse(err.code));
    socket.destroy();
  });
  // Once listening, a server error is a failed accept (out of file descriptors, say): keep serving.
  server.once('listening', () => server.on('error', (err) => log.error({ err }, 'accepting a connection failed')));
}

/**
 * Node times a new connection's headers from the moment it opens, and answers 408 when they are
 * late. But a client may open a connection and keep it unused for a while: Go's HTTP client (the
 * API server calling the webhook) pools a connection it dialled for a request another one served,
 * and a 408 arriving as it sends a request on it is taken for the answer ("the server responded
 * with the status code 408"). So a connection that has sent nothing by then is held as an idle
 * one: closed without a word once it has been open for the keep-alive timeout (which the webhook
 * sets past Go's own idle timeout, so the client lets go first), whatever it sends meanwhile short
 * of a request (Node's parser skips line breaks between requests). A request it starts is timed
 * from its first byte as usual. At most a quarter of the listener's connections are held so;
 * past that the oldest is closed.
 */
class UnusedConnections {
  private readonly limits: ServerLimits;
  private readonly closed: () => void;
  private readonly held = new Map<Socket, NodeJS.Timeout>();

  constructor(limits: ServerLimits, closed: () => void) {
    this.limits = limits;
    this.closed = closed;
  }

  hold(socket: Socket): void {
    const left = this.limits.keepAliveTimeoutMs - this.limits.headersTimeoutMs;
    if (left <= 0) return this.close(socket);
    const [oldest] = this.held.keys();
    if (oldest && this.held.size >= Math.max(1, Math.floor(this.limits.maxConnections / 4))) this.close(oldest);
    // Its deadline is fixed: activity short of a request does not extend it.
    socket.setTimeout(0);
    this.held.set(socket, setTimeout(() => this.close(socket), left));
    socket.once('close', () => this.forget(socket));
  }

  /** A request arrived on the socket: it is timed as any other from now on. */
  used(socket: Socket): void {
    if (this.forget(socket)) socket.setTimeout(this.limits.idleTimeoutMs);
  }

  private forget(socket: Socket): boolean {
    const timer = this.held.get(socket);
    if (!timer) return false;
    clearTimeout(timer);
    this.held.delete(socket);
    return true;
  }

  private close(socket: Socket): void {
    this.forget(socket);
    this.closed();
    socket.destroy();
  }
}

/**
 * The body, charged to `account` as it arrives: a declared length in full before anything is
 * read, so a body that cannot fit is refused unread. Rejects with a 413 past `limit` bytes and a
 * 503 when the listener's budget is spent, leaving the rest unread.
 */
function readBody(req: Http.IncomingMessage, account: BodyAccount, limit: number, refused: (reason: Refusal) => void): Promise<Buffer> {
  const refusal = (reason: 'too_large' | 'busy'): HttpError => {
    refused(reason);
    return reason === 'too_large' ? new HttpError(413, `request body exceeds ${limit} bytes`) : new HttpError(503, 'too many request bodies in flight', { 'Retry-After': '1' });
  };
  const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
  const upFront = declared === undefined ? undefined : account.take(declared);
  if (upFront) return Promise.reject(refusal(upFront));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const done = (): void => {
      req.off('data', onData).off('end', onEnd).off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      const over = declared === undefined ? account.take(chunk.length) : undefined;
      if (!over) {
        chunks.push(chunk);
        return;
      }
      done();
      // Paused, the request stops the socket's reads; the answer then closes the connection.
      req.pause();
      reject(refusal(over));
    };
    const onEnd = (): void => {
      done();
      resolve(Buffer.concat(chunks));
    };
    // Closed before its end: the client hung up or a timeout cut it off.
    const onClose = (): void => {
      done();
      reject(new HttpError(400, 'request body incomplete'));
    };
    req.on('data', onData).on('end', onEnd).on('close', onClose);
  });
}

function answerFailure(res: Http.ServerResponse, err: unknown, log: Logger): void {
  // Answers we chose (a client's mistake, a listener at its budget) are routine on an open port:
  // at debug, a flood of them cannot fill the log.
  const chosen = err instanceof HttpError;
  if (chosen) log.debug({ status: err.status, reason: err.message }, 'request rejected');
  else log.error({ err }, 'serving a request failed');
  if (res.headersSent) {
    // Half an answer is worse than none: the client sees the connection break.
    if (!res.writableEnded) res.destroy();
    return;
  }
  const status = chosen ? err.status : 500;
  res.writeHead(status, {
    ...(chosen ? err.headers : {}),
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
  res.end(`${chosen ? err.message : 'internal error'}\n`);
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
