// A TCP proxy in front of an apiserver that a test can cut, so a client behind it falls behind
// while others keep writing: `block()` drops every connection and refuses new ones (a dropped
// connection, which idempotent requests retry), `garble()` answers new ones with plain text where
// TLS is expected (requests fail at once, not retried), `stall()` keeps connections open but
// passes no byte (requests hang until their own deadlines); `unblock()` lets traffic through again.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

type Mode = 'open' | 'blocked' | 'garbled' | 'stalled';

export class TcpProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private mode: Mode = 'open';

  private constructor(server: net.Server) {
    this.server = server;
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = net.createServer();
    const proxy = new TcpProxy(server);
    server.on('connection', (client) => {
      if (proxy.mode === 'blocked') {
        client.destroy();
        return;
      }
      proxy.track(client);
      if (proxy.mode === 'garbled') {
        // Read and drop what the client sends, or its close would never be seen.
        client.resume();
        client.end('HTTP/1.1 503 Service Unavailable\r\n\r\n');
        return;
      }
      if (proxy.mode === 'stalled') {
        client.pause();
        return;
      }
      const upstream = net.connect(target);
      proxy.track(upstream);
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  block(): void {
    this.mode = 'blocked';
    this.dropAll();
  }

  garble(): void {
    this.mode = 'garbled';
    this.dropAll();
  }

  stall(): void {
    this.mode = 'stalled';
    for (const s of this.sockets) {
      s.unpipe();
      s.pause();
    }
  }

  unblock(): void {
    // Stalled connections may hold half-forwarded requests: clients reconnect rather than resume them.
    if (this.mode === 'stalled') this.dropAll();
    this.mode = 'open';
  }

  async stop(): Promise<void> {
    this.block();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private track(s: net.Socket): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => undefined);
  }

  private dropAll(): void {
    for (const s of this.sockets) s.destroy();
  }
}
