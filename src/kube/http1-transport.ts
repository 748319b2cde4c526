// HTTP/1.1 keep-alive agents: one for ordinary requests, one for watches, so a burst of writes
// never waits behind long-lived watch sockets. The REST client's transport for plain http, and
// for a server whose TLS handshake does not agree on h2.
import type * as Http from 'node:http';
import https from 'node:https';
import type { TlsSettings } from './credentials.ts';
import { http } from './node-http.ts';
import { sharedSecureContext, type SharedSecureContext } from './tls-contexts.ts';
import type { Exchange, OutgoingRequest, ResponseHead, Transport, TransportStats } from './transport.ts';

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
    // Node sends no length for DELETE bodies by default, and the server would then read the body
    // as the next request on the kept-alive socket.
    if (req.body !== undefined) r.setHeader('Content-Length', Buffer.byteLength(req.body));
    r.end(req.body);
    return {
      response,
      // Never Node's own `signal` option: it destroys `request.socket`, which once a response was
      // read whole is back in the pool (maybe serving another request), so a late abort crashed
      // the process. Here an abort destroys the response while it is incomplete, the request
      // before a response, and nothing after.
      abort: (err) => {
        if (!res) r.destroy(err);
        else if (!res.complete) res.destroy(err);
      },
    };
  }

  stats(): TransportStats {
    const count = (a: Http.Agent): number => [a.sockets, a.freeSockets].reduce((n, group) => n + Object.values(group).reduce((m, list) => m + (list?.length ?? 0), 0), 0);
    return { protocol: 'http/1.1', open: count(this.agent) + count(this.watchAgent), streams: 0, opened: this.opened, goaways: 0, draining: 0 };
  }

  close(): void {
    this.agent.destroy();
    this.watchAgent.destroy();
    this.context?.release();
  }
}
