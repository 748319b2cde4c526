// How the REST client's requests reach one server: the seam between what a call means (retries,
// deadlines, caps, in rest.ts) and how bytes travel. HTTP/2 multiplexes every call and watch to a
// server over one connection (http2-transport.ts); HTTP/1.1 keep-alive agents are the fallback
// for a server that does not offer h2, and for plain http.
import type * as Http from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import type { TlsSettings } from './credentials.ts';
import { http } from './node-http.ts';
import { Http2Transport } from './http2-transport.ts';
import { sharedSecureContext, type SharedSecureContext } from './tls-contexts.ts';

export interface OutgoingRequest {
  readonly url: URL;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  /** A watch: long-lived, so HTTP/1.1 gives it a socket of its own. */
  readonly watch: boolean;
}

export interface ResponseHead {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body; it ends with an error (never just stops) when the exchange is cut. */
  readonly body: Readable;
}

/** One request and its answer. */
export interface Exchange {
  /** The response head; rejects when the request fails before one arrives. */
  readonly response: Promise<ResponseHead>;
  /** Ends the exchange with `err`: the request before an answer, the body while unread, nothing once it was read whole. */
  abort(err: Error): void;
}

export interface TransportStats {
  /** `h2`, `http/1.1`, or `none` before the first connection said. */
  readonly protocol: 'h2' | 'http/1.1' | 'none';
  /** Connections open now (HTTP/1.1: sockets of both agents). */
  readonly open: number;
  /** Connections opened so far. */
  readonly opened: number;
  /** GOAWAY frames received so far. */
  readonly goaways: number;
}

export interface Transport {
  exchange(req: OutgoingRequest): Exchange;
  stats(): TransportStats;
  /** Destroys every connection. */
  close(): void;
}

export interface TransportOptions {
  /** How often a connection with open streams is checked with a PING; twice that without an answer ends it. */
  readonly pingIntervalMs: number;
}

/** The transport for a server: HTTP/2 when its TLS handshake agrees on h2, else HTTP/1.1. */
export function openTransport(server: URL, tls: TlsSettings, opts: TransportOptions): Transport {
  if (server.protocol !== 'https:') return new Http1Transport(server, tls);
  return new Http2Transport(server, tls, opts, () => new Http1Transport(server, tls));
}

/**
 * Two keep-alive agents: one for ordinary requests, one for watches, so a burst of writes never
 * waits behind long-lived watch sockets. The TLS context is shared, not built per socket.
 */
export class Http1Transport implements Transport {
  private readonly agent: Http.Agent;
  private readonly watchAgent: Http.Agent;
  private readonly module: typeof https | typeof http;
  private readonly context: SharedSecureContext | undefined;
  private readonly seen = new WeakSet<object>();
  private opened = 0;

  constructor(server: URL, tls: TlsSettings) {
    const secure = server.protocol === 'https:';
    this.module = secure ? https : http;
    this.context = secure ? sharedSecureContext(tls) : undefined;
    const tlsOpts = this.context ? { secureContext: this.context.context, rejectUnauthorized: tls.rejectUnauthorized ?? true, servername: tls.servername } : {};
    // keepAlive also turns on TCP keepalive probes (30 s), which find dead peers behind NATs.
    const common = { keepAlive: true, keepAliveMsecs: 30_000, ...tlsOpts };
    const Agent = secure ? https.Agent : http.Agent;
    this.agent = new Agent({ ...common, maxSockets: 64, maxFreeSockets: 16, scheduling: 'lifo' });
    this.watchAgent = new Agent({ ...common, maxFreeSockets: 4 });
  }

  exchange(req: OutgoingRequest): Exchange {
    const r = this.module.request(req.url, { method: req.method, headers: req.headers, agent: req.watch ? this.watchAgent : this.agent });
    r.on('socket', (sock) => {
      if (req.watch) sock.setKeepAlive(true, 30_000);
      if (!this.seen.has(sock)) {
        this.seen.add(sock);
        this.opened++;
      }
    });
    let res: Http.IncomingMessage | undefined;
    const response = new Promise<ResponseHead>((resolve, reject) => {
      r.on('response', (msg) => {
        res = msg;
        resolve({ status: msg.statusCode ?? 0, headers: msg.headers, body: msg });
      });
      r.on('error', reject);
    });
    r.end(req.body);
    return {
      response,
      abort: (err) => {
        if (!res) r.destroy(err);
        else if (!res.complete) res.destroy(err);
      },
    };
  }

  stats(): TransportStats {
    const count = (a: Http.Agent): number => [a.sockets, a.freeSockets].reduce((n, group) => n + Object.values(group).reduce((m, list) => m + (list?.length ?? 0), 0), 0);
    return { protocol: 'http/1.1', open: count(this.agent) + count(this.watchAgent), opened: this.opened, goaways: 0 };
  }

  close(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
    this.context?.release();
  }
}
