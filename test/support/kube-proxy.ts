// A TCP proxy in front of an apiserver that a test can cut: `block()` drops every connection and
// refuses new ones, so a client behind it falls behind while others keep writing.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export class TcpProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private blocked = false;

  private constructor(server: net.Server) {
    this.server = server;
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = net.createServer();
    const proxy = new TcpProxy(server);
    server.on('connection', (client) => {
      if (proxy.blocked) {
        client.destroy();
        return;
      }
      const upstream = net.connect(target);
      for (const s of [client, upstream]) {
        proxy.sockets.add(s);
        s.on('close', () => proxy.sockets.delete(s));
        s.on('error', () => undefined);
      }
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
    this.blocked = true;
    for (const s of this.sockets) s.destroy();
  }

  unblock(): void {
    this.blocked = false;
  }

  async stop(): Promise<void> {
    this.block();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
