// Every call and watch of a client over one HTTP/2 connection to its server: an API server holds
// one connection per client instead of one per watch, and the TLS handshake is paid once. Another
// connection opens only when those open have no stream left under the server's limit.
//
// What a long-lived HTTP/2 connection meets, and what happens then:
// - GOAWAY (an API server sends it on purpose, --goaway-chance; after any answer 401; and when
//   idle): the connection takes no new stream and goes once its streams end; new requests open
//   another. Unless it came with an error, its responses are told it is retiring (at most once a
//   minute), so that watches end and start again on the new one: the server would otherwise hold
//   both connections for as long as the old one's watches last. A stream the server did not process
//   (above the GOAWAY's last stream, never sent, or refused with REFUSED_STREAM before any
//   answer) fails with RequestNotProcessedError, which the REST client sends again whatever its
//   method; any other cut stream may have been processed.
// - A reset stream (RST_STREAM) fails that exchange only: its body fails, it never just ends.
// - A connection that dies or goes silent: a PING when nothing was read for an interval (or at
//   once when a call on it timed out), and no answer within half an interval ends it; every
//   stream on it then fails, none hangs.
// - Flow control: windows large enough that a big list is not paced by round trips, small enough
//   to bound what a server can make us buffer unread.
// - A reader that stops reading a body (a watch that failed on a bad line) cancels its stream.
import http2, { type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders as Http2Headers } from 'node:http2';
import type { IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import tls from 'node:tls';
import type { TlsSettings } from './credentials.ts';
import { ConnectionLostError, RequestNotProcessedError, isNetworkError } from './errors.ts';
import { Http1Transport } from './http1-transport.ts';
import { sharedSecureContext, type SharedSecureContext } from './tls-contexts.ts';
import type { Exchange, OutgoingRequest, ResponseHead, Transport, TransportStats } from './transport.ts';

const { NGHTTP2_REFUSED_STREAM, NGHTTP2_CANCEL, NGHTTP2_NO_ERROR } = http2.constants;

/** Unread bytes one stream may have in flight to us. */
const STREAM_WINDOW = 1 << 20;
/** Unread bytes all streams of a connection may have in flight to us. */
const CONNECTION_WINDOW = 16 << 20;
/** TCP connect, TLS handshake and the server's SETTINGS, together. */
const CONNECT_TIMEOUT_MS = 30_000;
/** A connection with no stream for this long is closed (API servers close theirs after 90 s). */
const IDLE_CLOSE_MS = 120_000;
/**
 * Connections taking new streams, at most: a server that allows one stream each cannot make us
 * open one per watch without end. (Connections draining after a GOAWAY hold only the streams
 * they had, and go with them.)
 */
const MAX_CONNECTIONS = 32;
/** New connections one request waits for before it gives up (a server that closes each at once). */
const CONNECTS_PER_REQUEST = 3;
/**
 * A GOAWAY sends the watches on its connection elsewhere at most once per this interval: each
 * watch opened again may draw a GOAWAY of its own (--goaway-chance counts every request), and a
 * connection with many watches would otherwise keep them moving without end. Watches left on a
 * draining connection stay there until they end.
 */
const RETIRE_INTERVAL_MS = 60_000;

export class Http2Transport implements Transport {
  private readonly server: URL;
  private readonly tlsSettings: TlsSettings;
  private readonly context: SharedSecureContext;
  private readonly pingIntervalMs: number;
  private readonly connections = new Set<Connection>();
  private connecting: Promise<void> | undefined;
  private pendingSocket: tls.TLSSocket | undefined;
  private fallback: Http1Transport | undefined;
  private closed = false;
  private opened = 0;
  private goaways = 0;
  private lastRetiredAt = -Infinity;

  constructor(server: URL, tlsSettings: TlsSettings, pingIntervalMs: number) {
    this.server = server;
    this.tlsSettings = tlsSettings;
    this.context = sharedSecureContext(tlsSettings);
    this.pingIntervalMs = pingIntervalMs;
  }

  exchange(req: OutgoingRequest): Exchange {
    if (this.fallback) return this.fallback.exchange(req);
    let inner: Exchange | undefined;
    let aborted: { err: Error | undefined } | undefined;
    const response = (async () => {
      const route = await this.route();
      if (aborted) {
        if (route !== 'http/1.1') route.release();
        throw aborted.err ?? new Error('the request was abandoned');
      }
      inner = route === 'http/1.1' ? this.fallback!.exchange(req) : streamExchange(route.open(req), route);
      return inner.response;
    })();
    return {
      response,
      abort: (err) => {
        aborted ??= { err };
        inner?.abort(err);
      },
    };
  }

  stats(): TransportStats {
    const fallback = this.fallback?.stats();
    return {
      protocol: fallback ? 'http/1.1' : this.opened > 0 ? 'h2' : 'none',
      open: this.connections.size + (fallback?.open ?? 0),
      draining: [...this.connections].filter((c) => c.draining).length,
      streams: [...this.connections].reduce((n, c) => n + c.streams, 0),
      opened: this.opened + (fallback?.opened ?? 0),
      goaways: this.goaways,
    };
  }

  close(): void {
    this.closed = true;
    this.pendingSocket?.destroy();
    for (const c of [...this.connections]) c.destroy(new ConnectionLostError(`${this.server.host}: the client was closed`));
    this.connections.clear();
    this.fallback?.close();
    this.context.release();
  }

  /** A connection with a stream reserved on it, or HTTP/1.1 when the server does not speak h2. */
  private async route(): Promise<Connection | 'http/1.1'> {
    for (let waited = 0; ; waited++) {
      if (this.closed) throw new Error(`${this.server.host}: the client is closed`);
      if (this.fallback) return 'http/1.1';
      for (const c of this.connections) if (c.reserve()) return c;
      // Nothing of this request was sent yet: whatever stops it here, it may be sent again.
      if (waited >= CONNECTS_PER_REQUEST) throw new RequestNotProcessedError(`${this.server.host}: ${waited} new HTTP/2 connections in a row took no stream of this request`);
      if (!this.connecting) {
        const taking = [...this.connections].filter((c) => c.takesStreams);
        if (taking.length >= MAX_CONNECTIONS) {
          throw new RequestNotProcessedError(`${this.server.host}: ${MAX_CONNECTIONS} HTTP/2 connections have no stream free (the server allows ${taking[0]?.limit ?? 0} each)`);
        }
        this.connecting = this.connect().finally(() => (this.connecting = undefined));
      }
      try {
        await this.connecting;
      } catch (err) {
        if (!isNetworkError(err)) throw err;
        throw new RequestNotProcessedError(`${this.server.host}: ${err instanceof Error ? err.message : 'the connection failed'}`, err);
      }
    }
  }

  private async connect(): Promise<void> {
    const deadline = performance.now() + CONNECT_TIMEOUT_MS;
    const timeoutMessage = `${this.server.host}: connecting timed out after ${CONNECT_TIMEOUT_MS} ms`;
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
      await settled(socket, 'secureConnect', deadline, timeoutMessage);
      if (this.closed) throw new Error(`${this.server.host}: the client is closed`);
      if (socket.alpnProtocol !== 'h2') {
        socket.destroy();
        this.fallback ??= new Http1Transport(this.server, this.tlsSettings);
        return;
      }
      socket.setKeepAlive(true, 30_000);
      const session = http2.connect(this.server.origin, {
        createConnection: () => socket,
        settings: { enablePush: false, initialWindowSize: STREAM_WINDOW },
      });
      // Its errors reach every stream on it; the session itself must not throw them at the process.
      session.on('error', () => undefined);
      const conn = new Connection(session, socket, this.pingIntervalMs, () => this.connections.delete(conn));
      // From the start: a server may say GOAWAY with its first frames.
      session.on('goaway', (code: number, lastStreamID: number) => {
        this.goaways++;
        conn.drain(code, lastStreamID);
        // With an error code Node ends the connection at once, and its watches fail as they should.
        if (code !== NGHTTP2_NO_ERROR || conn.watches === 0 || performance.now() - this.lastRetiredAt < RETIRE_INTERVAL_MS) return;
        this.lastRetiredAt = performance.now();
        conn.retire();
      });
      this.opened++;
      try {
        await settled(session, 'remoteSettings', deadline, timeoutMessage);
      } catch (err) {
        conn.destroy();
        throw err;
      }
      if (this.closed) {
        conn.destroy();
        throw new Error(`${this.server.host}: the client is closed`);
      }
      if (conn.limit < 1) {
        conn.destroy();
        throw new Error(`${this.server.host}: the server allows no HTTP/2 stream`);
      }
      // Gone already (a GOAWAY with its settings): the caller connects again, up to its limit.
      if (!conn.takesStreams) return conn.destroy();
      session.setLocalWindowSize(CONNECTION_WINDOW);
      this.connections.add(conn);
    } catch (err) {
      socket.destroy();
      throw err;
    } finally {
      this.pendingSocket = undefined;
    }
  }
}

/**
 * One HTTP/2 connection and the streams reserved on it. Its health is checked for as long as it
 * lives, as client-go does: when nothing was read from it for an interval, a PING, and no answer
 * within half an interval ends it. A call that times out on it asks for a check at once, so that
 * short calls on a dead connection do not each wait out their deadline.
 */
class Connection {
  private readonly session: ClientHttp2Session;
  private readonly socket: tls.TLSSocket;
  private readonly pingIntervalMs: number;
  private readonly gone: () => void;
  private active = 0;
  /** Open streams of watches, among the active. */
  private watchStreams = 0;
  /** The GOAWAY received, if any: streams above its last stream were not processed. */
  private goaway: { code: number; lastStreamID: number } | undefined;
  private readonly retirement = new AbortController();
  private readSinceCheck = true;
  private pingOutstanding = false;
  /** Checks in a row, while draining, that read nothing: Node sends no PING on a closing session. */
  private silentDrainChecks = 0;
  private readonly checker: NodeJS.Timeout;
  private idle: NodeJS.Timeout | undefined;

  constructor(session: ClientHttp2Session, socket: tls.TLSSocket, pingIntervalMs: number, gone: () => void) {
    this.session = session;
    this.socket = socket;
    this.pingIntervalMs = pingIntervalMs;
    this.gone = gone;
    session.unref();
    session.on('close', () => this.destroy());
    this.checker = setInterval(() => this.check(), pingIntervalMs).unref();
    this.idleFromNow();
  }

  /** The server's limit of concurrent streams on this connection (SETTINGS came before it was used). */
  get limit(): number {
    return this.session.remoteSettings.maxConcurrentStreams ?? 0;
  }

  /** Streams reserved or open on it. */
  get streams(): number {
    return this.active;
  }

  /** Watches open on it. */
  get watches(): number {
    return this.watchStreams;
  }

  /** It got a GOAWAY: it takes no new stream and goes when its streams end. */
  get draining(): boolean {
    return this.goaway !== undefined;
  }

  /** Aborted when what it carries should move to a new connection (see ResponseHead). */
  get retiring(): AbortSignal {
    return this.retirement.signal;
  }

  /** Whether it may take new streams (no GOAWAY, not closed), full or not. */
  get takesStreams(): boolean {
    return !this.goaway && !this.session.closed && !this.session.destroyed;
  }

  /** Takes a stream slot when the connection has one; the caller then opens a stream or releases it. */
  reserve(): boolean {
    if (!this.takesStreams || this.active >= this.limit) return false;
    if (this.active++ === 0) {
      clearTimeout(this.idle);
      this.session.ref();
    }
    return true;
  }

  release(): void {
    if (--this.active > 0) return;
    this.session.unref();
    // Draining, it has nothing left to finish: it goes now, whether or not the server closes its side.
    if (this.goaway) this.destroy();
    else this.idleFromNow();
  }

  /** Something was read from it: it is alive. */
  read(): void {
    this.readSinceCheck = true;
  }

  /**
   * Opens the reserved stream. Node refuses here only what the request itself gets wrong (a
   * header HTTP/2 forbids): the slot is released and the request fails.
   */
  open(req: OutgoingRequest): ClientHttp2Stream {
    const headers: Record<string, string> = { ':method': req.method, ':path': `${req.url.pathname}${req.url.search}` };
    for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v;
    try {
      const stream = this.session.request(headers, { endStream: req.body === undefined });
      if (req.body !== undefined) stream.end(req.body);
      if (req.watch) {
        this.watchStreams++;
        stream.once('close', () => this.watchStreams--);
      }
      return stream;
    } catch (err) {
      this.release();
      throw err;
    }
  }

  /** Whether a stream that failed was certainly not processed by the server. */
  notProcessed(stream: ClientHttp2Stream, answered: boolean): boolean {
    if (answered) return false;
    // Never sent (still pending when the connection went).
    if (stream.id === undefined) return true;
    if (this.goaway) return stream.id > this.goaway.lastStreamID;
    return stream.rstCode === NGHTTP2_REFUSED_STREAM;
  }

  drain(code: number, lastStreamID: number): void {
    this.goaway = { code, lastStreamID };
    clearTimeout(this.idle);
    if (this.active === 0) this.destroy();
  }

  /** Tells the responses on it to move to another connection (a GOAWAY came first). */
  retire(): void {
    this.retirement.abort();
  }

  /** Ends the connection; its streams fail with `err` (or as cut). */
  destroy(err?: Error): void {
    clearInterval(this.checker);
    clearTimeout(this.idle);
    if (!this.session.destroyed) this.session.destroy(err);
    // A session closed gracefully (after a GOAWAY) only ends its side of the socket and keeps it
    // until the server closes its own, which it may never do.
    this.socket.destroy();
    this.gone();
  }

  /** Checks the connection now, unless nothing may be wrong with it (something was just read). */
  suspect(): void {
    if (!this.pingOutstanding) this.ping();
  }

  private check(): void {
    const read = this.readSinceCheck;
    this.readSinceCheck = false;
    if (this.goaway) {
      // No PING on a closing session: a draining connection that reads nothing for two
      // intervals is taken for dead (its watches start again elsewhere, from where they were).
      this.silentDrainChecks = read ? 0 : this.silentDrainChecks + 1;
      if (this.silentDrainChecks >= 2) this.destroy(timedOut(`a draining HTTP/2 connection read nothing for ${2 * this.pingIntervalMs} ms`));
      return;
    }
    if (!read && !this.pingOutstanding) this.ping();
  }

  private ping(): void {
    this.pingOutstanding = true;
    const timeoutMs = this.pingIntervalMs / 2;
    const timer = setTimeout(() => this.destroy(timedOut(`no answer to an HTTP/2 PING within ${timeoutMs} ms`)), timeoutMs).unref();
    const sent = this.session.ping((err) => {
      clearTimeout(timer);
      this.pingOutstanding = false;
      if (!err) this.read();
    });
    if (!sent) {
      clearTimeout(timer);
      this.pingOutstanding = false;
    }
  }

  private idleFromNow(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.destroy(), IDLE_CLOSE_MS).unref();
  }
}

function timedOut(message: string): Error {
  return Object.assign(new Error(message), { code: 'ETIMEDOUT' });
}

/**
 * The exchange of one stream. Its body is handed on through a stream of ours that ends only when
 * the server ended the stream cleanly: Node ends a reset stream's body, or one whose connection
 * died, just as it ends a complete one, and a reader must not take a cut watch or list for whole.
 * Closing that body before its end cancels the stream.
 */
function streamExchange(stream: ClientHttp2Stream, conn: Connection): Exchange {
  const body = new PassThrough();
  // Its reader sees the error; a body nobody reads (a closed watch) must not throw it at the process.
  body.on('error', () => undefined);
  let headed = false;
  let dataSeen = false;
  let ended = false;
  let finished = false;
  const cancel = (): void => {
    if (!stream.closed) stream.close(NGHTTP2_CANCEL);
  };
  const finish = (err?: Error): void => {
    if (finished) return;
    finished = true;
    if (err) body.destroy(err);
    else body.end();
  };
  stream.on('data', () => {
    dataSeen = true;
    conn.read();
  });
  stream.on('end', () => (ended = true));
  stream.pipe(body, { end: false });
  body.on('close', () => {
    if (finished) return;
    finished = true;
    cancel();
  });
  const failure = (err: Error | undefined): Error =>
    conn.notProcessed(stream, headed || dataSeen) ? new RequestNotProcessedError('the server did not process the request (its HTTP/2 stream was refused)') : (err ?? new ConnectionLostError(`the HTTP/2 stream ended before its response did (code ${stream.rstCode})`));
  const response = new Promise<ResponseHead>((resolve, reject) => {
    stream.on('response', (headers) => {
      headed = true;
      conn.read();
      resolve({ status: Number(headers[':status']), headers: withoutPseudoHeaders(headers), body, retiring: conn.retiring });
    });
    stream.on('error', (err: Error) => {
      const e = failure(err);
      reject(e);
      finish(e);
    });
    stream.on('close', () => {
      conn.release();
      // Whole only when answered and ended by the server (a NO_ERROR close before an answer, as a
      // destroyed session gives its streams, is a cut).
      if (headed && ended && stream.rstCode === NGHTTP2_NO_ERROR) return finish();
      const e = failure(undefined);
      if (!headed) reject(e);
      finish(e);
    });
  });
  return {
    response,
    abort: (err) => {
      // A call that gave up on an open stream may have met a dead connection: check it now.
      if (err && !stream.closed) conn.suspect();
      if (err) finish(err);
      else if (!finished) body.destroy();
      // CANCEL tells the server we gave up; the connection serves on.
      cancel();
    },
  };
}

function withoutPseudoHeaders(headers: Http2Headers): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (!k.startsWith(':')) out[k] = v;
  return out;
}

/** Waits for `event`; an 'error' or 'close' first, or the deadline passing, rejects (and destroys the emitter). */
function settled(emitter: NodeJS.EventEmitter & { destroy(err?: Error): void }, event: string, deadline: number, timeoutMessage: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => emitter.destroy(Object.assign(new Error(timeoutMessage), { code: 'ETIMEDOUT' })), Math.max(0, deadline - performance.now()));
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
