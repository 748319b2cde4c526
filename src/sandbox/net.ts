// Loopback ports and readiness probes for the sandbox's servers.
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** The kernel's range for outgoing connections' local ports (Linux default when unreadable). */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low && high) return [low, high];
  } catch {
    // not Linux, or no /proc: assume the default
  }
  return [32768, 60999];
}

const LOWEST_PORT = 10_000;

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Ports this process handed out, never handed out again: until its server binds it a port is as
 * free as any other, and servers started at once (a group of 16 starts 48 controller ports
 * together) would otherwise draw the same one; a server stopped to be restarted on its ports
 * leaves them free meanwhile. A process uses hundreds of the ~22,000 at most.
 */
const handedOut = new Set<number>();

/**
 * A free loopback port for a server that starts later, never one this process handed out before.
 * Drawn at random from below the kernel's ephemeral range: a port from inside it can be handed to
 * an outgoing connection in the seconds before our server binds it (seen in the test suite as
 * EADDRINUSE).
 */
export async function freePort(): Promise<number> {
  const [ephemeralLow] = ephemeralRange();
  const high = Math.min(ephemeralLow, 65_536) - 1;
  for (let attempt = 0; attempt < 100 && high > LOWEST_PORT; attempt++) {
    const port = LOWEST_PORT + Math.floor(Math.random() * (high - LOWEST_PORT + 1));
    if (handedOut.has(port)) continue;
    // Taken before the check binds it, so that a draw made meanwhile passes it by.
    handedOut.add(port);
    if (await canBind(port)) return port;
  }
  throw new Error(`no free port between ${LOWEST_PORT} and ${high}`);
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
