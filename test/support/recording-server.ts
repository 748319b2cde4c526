// A stand-in for a server an attacker controls: it records every TCP connection it is offered
// and every request (with its Authorization header), and answers 401 to all of them. TLS
// servers get a certificate of their own for 127.0.0.1, whose CA a kubeconfig can name.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateCertificates } from '../../src/kube/certificates.ts';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly authorization: string | undefined;
}

export class RecordingServer {
  /** `http://` or `https://127.0.0.1:<port>`. */
  readonly url: string;
  /** PEM of the CA that signed a TLS server's certificate; undefined for plain HTTP. */
  readonly caPem: string | undefined;
  /** TCP connections accepted, counted before any TLS handshake or request. */
  connections = 0;
  /** Requests received, CONNECTs (a proxy's first request) included. */
  readonly requests: RecordedRequest[] = [];
  private readonly server: http.Server;

  private constructor(server: http.Server, url: string, caPem: string | undefined) {
    this.server = server;
    this.url = url;
    this.caPem = caPem;
  }

  static async start(opts: { tls: boolean }): Promise<RecordingServer> {
    let server: http.Server;
    let caPem: string | undefined;
    if (opts.tls) {
      const pair = await generateCertificates({ dnsNames: [], ipAddresses: ['127.0.0.1'] });
      server = https.createServer({ cert: pair.tlsCert, key: pair.tlsKey });
      caPem = pair.caCert;
    } else {
      server = http.createServer();
    }
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const recorder = new RecordingServer(server, `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`, caPem);
    server.on('connection', () => recorder.connections++);
    const record = (req: http.IncomingMessage): void => {
      recorder.requests.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization });
    };
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      record(req);
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 401, reason: 'Unauthorized' }));
    });
    server.on('connect', (req: http.IncomingMessage, socket: import('node:stream').Duplex) => {
      record(req);
      socket.destroy();
    });
    // A client that gives up on our certificate is still counted as a connection above.
    server.on('tlsClientError', () => undefined);
    return recorder;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
