// Loopback ports and readiness probes for the sandbox's servers.
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A free loopback port (the kernel picks it; the small race until the server binds is accepted). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** GET a health URL; resolves with the status code and body, or undefined when nothing answers. */
export async function probe(url: string, timeoutMs = 2000): Promise<{ status: number; body: string } | undefined> {
  const get = url.startsWith('https:') ? httpsGet : httpGet;
  return new Promise((resolve) => {
    // Health endpoints are anonymous; the probe only asks whether the server is up, not who it is.
    const req = get(url, { rejectUnauthorized: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

/**
 * Polls `url` until it answers 200, `isDead()` says the process has gone, or the timeout passes.
 * Returns why it stopped waiting.
 */
export async function waitHealthy(
  url: string,
  isDead: () => boolean,
  timeoutMs: number,
): Promise<'ready' | 'exited' | 'timeout'> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (isDead()) return 'exited';
    const res = await probe(url);
    if (res?.status === 200) return 'ready';
    await sleep(250);
  }
  return 'timeout';
}
