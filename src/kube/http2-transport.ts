// Every call and watch to one server over one HTTP/2 connection, as client-go does: an API server
// holds one connection per client instead of one per watch, and the TLS handshake is paid once.
// A second connection opens only when the first has no stream left under the server's limit.
//
// What a long-lived HTTP/2 connection meets, and what happens then:
// - GOAWAY (an API server sends it on purpose, --goaway-chance, and when idle): the connection
//   takes no new stream and closes once its streams end; new requests open another. A stream
//   the server says it never processed (above the GOAWAY's last stream, or REFUSED_STREAM) fails
//   with RequestNotProcessedError, which the REST client sends again whatever its method.
// - A reset stream (RST_STREAM) fails that exchange only; its body ends with an error. (A reset
//   with NO_ERROR is how a server says it has sent all it means to: the body ends there.)
// - A connection that dies or goes silent: a PING every interval while streams are open, and no
//   answer within another interval ends it; every stream on it then fails, none hangs.
// - Flow control: windows large enough that a big list is not paced by round trips, small enough
//   to bound what a server can make us buffer unread.
import http2, { type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders as Http2Headers } from 'node:http2';
import type { IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import tls from 'node:tls';
import type { TlsSettings } from './credentials.ts';
import { ConnectionLostError, RequestNotProcessedError } from './errors.ts';
import { sharedSecureContext, type SharedSecureContext } from './tls-contexts.ts';
import { type Exchange, type OutgoingRequest, type ResponseHead, type Transport, type TransportOptions, type TransportStats } from './transport.ts';

const { NGHTTP2_REFUSED_STREAM, NGHTTP2_CANCEL, NGHTTP2_NO_ERROR } = http2.constants;

/** Unread bytes one stream may have in flight to us. */
const STREAM_WINDOW = 1 << 20;
/** Unread bytes all streams of a connection may have in flight to us. */
const CONNECTION_WINDOW = 16 << 20;
/** TCP connect, TLS handshake and the server's SETTINGS, together. */
const CONNECT_TIMEOUT_MS = 30_000;
/** A connection with no stream for this long is closed (API servers close theirs after 90 s). */
const IDLE_CLOSE_MS = 120_000;
/** Connections to one server at most: a server that allows one stream each cannot make us open one per watch without end. */
export const MAX_CONNECTIONS = 32;

export class Http2Transport implements Transport {
  private readonly server: URL;
  private readonly tlsSettings: TlsSettings;
  private readonly context: SharedSecureContext;
  private readonly opts: TransportOptions;
  private readonly makeFallback: () => Transport;
  private readonly connections = new Set<Connection>();
  private connecting: Promise<void> | undefined;
  private pendingSocket: tls.TLSSocket | undefined;
  private fallback: Transport | undefined;
  private closed = false;
  private opened = 0;
  private goaways = 0;

  constructor(server: URL, tlsSettings: TlsSettings, opts: TransportOptions, makeFallback: () => Transport) {
    this.server = server;
    this.tlsSettings = tlsSettings;
    this.context = sharedSecureContext(tlsSettings);
    this.opts = opts;
    this.makeFallback = makeFallback;
  }

  exchange(req: OutgoingRequest): Exchange {
    if (this.fallback) return this.fallback.exchange(req);
    let inner: Exchange | undefined;
    let aborted: Error | undefined;
    const response = (async () => {
      for (;;) {
        const route = await this.route();
        if (route === 'http/1.1') inner = this.fallback!.exchange(req);
        else {
          if (aborted) {
            route.release();
            throw aborted;
          }
          const stream = route.open(req);
          // The connection closed under us between picking and opening: pick again.
          if (!stream) continue;
          inner = streamExchange(stream, route);
        }
        if (aborted) inner.abort(aborted);
        return inner.response;
      }
    })();
    return {
      response,
      abort: (err) => {
        aborted ??= err;
        inner?.abort(err);
      },
    };
  }

  stats(): TransportStats {
    const fallback = this.fallback?.stats();
    return {
      protocol: fallback ? 'http/1.1' : this.opened > 0 ? 'h2' : 'none',
      open: this.connections.size + (fallback?.open ?? 0),
      opened: this.opened + (fallback?.opened ?? 0),
      goaways: this.goaways,
    };
  }

  close(): void {
    this.closed = true;
    this.pendingSocket?.destroy();
    for (const c of this.connections) c.session.destroy();
    this.connections.clear();
    this.fallback?.close();
    this.context.release();
  }

  /** A connection with a stream reserved on it, or HTTP/1.1 when the server does not speak h2. */
  private async route(): Promise<Connection | 'http/1.1'> {
    for (;;) {
      if (this.closed) throw new Error(`${this.server.host}: the client is closed`);
      if (this.fallback) return 'http/1.1';
      for (const c of this.connections) if (c.reserve()) return c;
      if (!this.connecting) {
        if (this.connections.size >= MAX_CONNECTIONS) {
          throw new Error(`${this.server.host}: ${MAX_CONNECTIONS} HTTP/2 connections have no stream free (the server allows ${[...this.connections][0]?.limit ?? 0} per connection)`);
        }
        this.connecting = this.connect().finally(() => (this.connecting = undefined));
      }
      await this.connecting;
    }
  }

  private async connect(): Promise<void> {
    const host = this.server.hostname.replace(/^\[(.*)\]$/, '$1');
    const socket = tls.connect({
      host,
      port: Number(this.server.port || 443),
      // A name to check the certificate against; an address is checked as an address (no SNI for it).
      servername: this.tlsSettings.servername ?? (net.isIP(host) ? undefined : host),
      secureContext: this.context.context,
      rejectUnauthorized: this.tlsSettings.rejectUnauthorized ?? true,
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    this.pendingSocket = socket;
    try {
      await settled(socket, 'secureConnect', CONNECT_TIMEOUT_MS, `${this.server.host}: connecting timed out after ${CONNECT_TIMEOUT_MS} ms`);
      if (this.closed) throw new Error(`${this.server.host}: the client is closed`);
      if (socket.alpnProtocol !== 'h2') {
        socket.destroy();
        this.fallback ??= this.makeFallback();
        return;
      }
      socket.setKeepAlive(true, 30_000);
      const session = http2.connect(this.server.origin, {
        createConnection: () => socket,
        settings: { enablePush: false, initialWindowSize: STREAM_WINDOW },
      });
      // Its errors reach every stream on it; the session itself must not throw them at the process.
      session.on('error', () => undefined);
      try {
        await settled(session, 'remoteSettings', CONNECT_TIMEOUT_MS, `${this.server.host}: no HTTP/2 settings within ${CONNECT_TIMEOUT_MS} ms`);
      } catch (err) {
        session.destroy();
        throw err;
      }
      if (this.closed) {
        session.destroy();
        throw new Error(`${this.server.host}: the client is closed`);
      }
      session.setLocalWindowSize(CONNECTION_WINDOW);
      const conn = new Connection(session, this.opts.pingIntervalMs);
      if (conn.limit < 1) {
        session.destroy();
        throw new Error(`${this.server.host}: the server allows no HTTP/2 stream`);
      }
      this.connections.add(conn);
      this.opened++;
      session.on('goaway', () => {
        this.goaways++;
        conn.drain();
      });
      session.on('close', () => {
        this.connections.delete(conn);
        conn.stop();
      });
    } catch (err) {
      socket.destroy();
      throw err;
    } finally {
      this.pendingSocket = undefined;
    }
  }
}

/** One HTTP/2 connection and the streams reserved on it. */
class Connection {
  readonly session: ClientHttp2Session;
  private readonly pingIntervalMs: number;
  private active = 0;
  private draining = false;
  private pinger: NodeJS.Timeout | undefined;
  private idle: NodeJS.Timeout | undefined;

  constructor(session: ClientHttp2Session, pingIntervalMs: number) {
    this.session = session;
    this.pingIntervalMs = pingIntervalMs;
    session.unref();
    this.idleFromNow();
  }

  /** The server's limit of concurrent streams on this connection. */
  get limit(): number {
    return this.session.remoteSettings.maxConcurrentStreams ?? 100;
  }

  /** Takes a stream slot when the connection has one; the caller then opens a stream or releases it. */
  reserve(): boolean {
    if (this.draining || this.session.closed || this.session.destroyed || this.active >= this.limit) return false;
    if (this.active++ === 0) {
      clearTimeout(this.idle);
      this.session.ref();
      this.pinger = setInterval(() => this.ping(), this.pingIntervalMs).unref();
    }
    return true;
  }

  release(): void {
    if (--this.active > 0) return;
    clearInterval(this.pinger);
    this.session.unref();
    if (!this.draining) this.idleFromNow();
  }

  /** Opens the reserved stream; undefined (the slot released) when the connection closed meanwhile. */
  open(req: OutgoingRequest): ClientHttp2Stream | undefined {
    const headers: Record<string, string> = { ':method': req.method, ':path': `${req.url.pathname}${req.url.search}` };
    for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v;
    try {
      const stream = this.session.request(headers, { endStream: req.body === undefined });
      if (req.body !== undefined) stream.end(req.body);
      return stream;
    } catch {
      // ERR_HTTP2_GOAWAY_SESSION or ERR_HTTP2_INVALID_SESSION: nothing was sent.
      this.draining = true;
      this.release();
      return undefined;
    }
  }

  drain(): void {
    this.draining = true;
    clearTimeout(this.idle);
  }

  stop(): void {
    clearInterval(this.pinger);
    clearTimeout(this.idle);
  }

  private ping(): void {
    const timer = setTimeout(() => this.session.destroy(Object.assign(new Error(`no answer to an HTTP/2 PING within ${this.pingIntervalMs} ms`), { code: 'ETIMEDOUT' })), this.pingIntervalMs).unref();
    const sent = this.session.ping(() => clearTimeout(timer));
    if (!sent) clearTimeout(timer);
  }

  private idleFromNow(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.session.close(), IDLE_CLOSE_MS).unref();
  }
}

/**
 * The exchange of one stream. Its body is handed on through a stream of ours that ends only when
 * the server ended the stream cleanly: Node ends a reset stream's body, or one whose connection
 * died, just as it ends a complete one, and a reader must not take a cut watch or list for whole.
 */
function streamExchange(stream: ClientHttp2Stream, conn: Connection): Exchange {
  const body = new PassThrough();
  // Its reader sees the error; a body nobody reads (a closed watch) must not throw it at the process.
  body.on('error', () => undefined);
  let headed = false;
  let ended = false;
  let finished = false;
  const finish = (err?: Error): void => {
    if (finished) return;
    finished = true;
    if (err) body.destroy(err);
    else body.end();
  };
  stream.on('end', () => (ended = true));
  stream.pipe(body, { end: false });
  const response = new Promise<ResponseHead>((resolve, reject) => {
    stream.on('response', (headers) => {
      headed = true;
      resolve({ status: Number(headers[':status']), headers: withoutPseudoHeaders(headers), body });
    });
    stream.on('error', (err: Error) => {
      const failure = stream.rstCode === NGHTTP2_REFUSED_STREAM ? notProcessed() : err;
      reject(failure);
      finish(failure);
    });
    stream.on('close', () => {
      conn.release();
      if (ended && stream.rstCode === NGHTTP2_NO_ERROR) return finish();
      // Refused (above a GOAWAY's last stream), reset, or cut with its connection.
      const failure = stream.rstCode === NGHTTP2_REFUSED_STREAM ? notProcessed() : new ConnectionLostError(`the HTTP/2 stream ended before its response did (code ${stream.rstCode})`);
      if (!headed) reject(failure);
      finish(failure);
    });
  });
  return {
    response,
    abort: (err) => {
      finish(err);
      // CANCEL tells the server we gave up; the connection serves on.
      if (!stream.closed) stream.close(NGHTTP2_CANCEL);
    },
  };
}

function notProcessed(): RequestNotProcessedError {
  return new RequestNotProcessedError('the server refused the HTTP/2 stream before processing it');
}

function withoutPseudoHeaders(headers: Http2Headers): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (!k.startsWith(':')) out[k] = v;
  return out;
}

/** Waits for `event`; an 'error' or 'close' first, or the time running out, rejects. */
function settled(emitter: NodeJS.EventEmitter & { destroy(err?: Error): void }, event: string, timeoutMs: number, timeoutMessage: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => emitter.destroy(Object.assign(new Error(timeoutMessage), { code: 'ETIMEDOUT' })), timeoutMs);
    const done = (err?: Error): void => {
      clearTimeout(timer);
      emitter.off(event, onEvent);
      emitter.off('error', onError);
      emitter.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onEvent = (): void => done();
    const onError = (err: Error): void => done(err);
    const onClose = (): void => done(new ConnectionLostError('the connection closed while it was being set up'));
    emitter.once(event, onEvent);
    emitter.once('error', onError);
    emitter.once('close', onClose);
  });
}
