// How the REST client's requests reach one server: the seam between what a call means (retries,
// deadlines, caps, in rest.ts) and how its bytes travel: HTTP/2, every call and watch of a client
// over one connection (http2-transport.ts), or HTTP/1.1 keep-alive agents (http1-transport.ts)
// for a server that does not offer h2, and for plain http.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

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
  /** The body: it ends ('end') only when the server ended it; a cut one fails or closes before its end. */
  readonly body: Readable;
  /**
   * Aborted when the connection carrying the response was asked to go away (an HTTP/2 GOAWAY
   * that lets its streams finish; see Http2Transport for when): a long-lived response (a watch)
   * should end and start again, which takes it to a new connection. The server otherwise holds
   * the old connection for as long as the watch lasts, beside the new one. Absent where
   * connections are never shared (HTTP/1.1).
   */
  readonly retiring?: AbortSignal;
}

/** One request and its answer. */
export interface Exchange {
  /** The response head; rejects when the request fails before one arrives. */
  readonly response: Promise<ResponseHead>;
  /**
   * Ends the exchange: the request before an answer, the body while the server still sends it,
   * nothing once it was read whole. With an error, the body's reader gets it; without, the body
   * just closes (its reader is done with it).
   */
  abort(err?: Error): void;
}

export interface TransportStats {
  /** `h2`, `http/1.1`, or `none` before the first connection said. */
  readonly protocol: 'h2' | 'http/1.1' | 'none';
  /** Connections open now. */
  readonly open: number;
  /** HTTP/2 streams reserved or open now (HTTP/1.1: requests in flight are not counted, 0). */
  readonly streams: number;
  /** Connections opened so far. */
  readonly opened: number;
  /** GOAWAY frames received so far. */
  readonly goaways: number;
  /** Connections open now that got a GOAWAY: they take no new stream and close when their streams end. */
  readonly draining: number;
}

export interface Transport {
  exchange(req: OutgoingRequest): Exchange;
  stats(): TransportStats;
  /** Destroys every connection. */
  close(): void;
}
