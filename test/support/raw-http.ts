// Raw HTTP/1.1 over TCP or TLS, for throwing at our servers what no HTTP client would send:
// broken request lines and headers, bodies that never end, clients that stall. Also the
// fast-check generators of such requests, shared by the unit and integration fuzz tests.
import net from 'node:net';
import tls from 'node:tls';
import fc from 'fast-check';
import { LINGER_MS } from '../../src/kube/http-server.ts';

/** Opens a connection to the server under test. */
export type Connect = () => net.Socket;

export function tcp(port: number): Connect {
  return () => net.connect({ host: '127.0.0.1', port });
}

/** TLS without verification: these tests are about what follows the handshake. */
export function overTls(port: number): Connect {
  return () => tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
}

export interface Answer {
  /** The status of the first final response; undefined when the server closed without one. */
  readonly status: number | undefined;
  /** Its status line and headers. */
  readonly head: string;
}

/** The first final (non-1xx) response head in `data`, or undefined while it is incomplete. */
function firstAnswer(data: Buffer): Answer | undefined {
  let rest = data.toString('latin1');
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const head = rest.slice(0, end);
    const status = Number(/^HTTP\/1\.[01] (\d{3}) /.exec(head)?.[1] ?? NaN);
    if (!(status >= 100 && status < 200)) return { status: Number.isNaN(status) ? undefined : status, head };
    rest = rest.slice(end + 4);
  }
}

/**
 * Sends `request` (after keeping the new connection unused for `quietMs`) and ends our side, so
 * the server has everything it will get; resolves with the first response, or `status: undefined`
 * once the server closes without one. Rejects when the server does neither within `timeoutMs` of
 * the request: a hung request is a failure too.
 */
export function exchange(connect: Connect, request: string | Uint8Array, timeoutMs = 10_000, quietMs = 0): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect();
    const chunks: Buffer[] = [];
    const finish = (answer: Answer | undefined, err?: Error): void => {
      clearTimeout(timer);
      socket.destroy();
      if (answer) resolve(answer);
      else reject(err ?? new Error('no answer'));
    };
    const timer = setTimeout(() => finish(undefined, new Error(`no answer and no close within ${timeoutMs} ms`)), quietMs + timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const answer = firstAnswer(Buffer.concat(chunks));
      if (answer) finish(answer);
    });
    // A reset or a close are both the server hanging up on garbage.
    socket.on('error', () => undefined);
    socket.on('close', () => finish(firstAnswer(Buffer.concat(chunks)) ?? { status: undefined, head: Buffer.concat(chunks).toString('latin1') }));
    if (quietMs > 0) setTimeout(() => socket.end(request), quietMs);
    else socket.end(request);
  });
}

export interface Stalled extends Answer {
  /** From the first byte sent to the server closing the connection. */
  readonly closedAfterMs: number;
}

/** What a slow client trickles: one character of `text` (round and round) every `everyMs`, from `afterMs` on. */
export interface Drip {
  readonly text: string;
  readonly everyMs: number;
  readonly afterMs?: number;
}

/**
 * A slow client: sends `prefix`, then drips (or sends nothing more) until the server closes the
 * connection (resolves) or `giveUpMs` passes (rejects: the server let it hold the connection).
 */
export function stall(connect: Connect, giveUpMs: number, prefix = '', drip?: Drip): Promise<Stalled> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect();
    const chunks: Buffer[] = [];
    let sent = 0;
    let ticker: NodeJS.Timeout | undefined;
    const start = drip && setTimeout(() => (ticker = setInterval(() => socket.write(drip.text.charAt(sent++ % drip.text.length)), drip.everyMs)), drip.afterMs ?? 0);
    const timer = setTimeout(() => {
      clearTimeout(start);
      clearInterval(ticker);
      socket.destroy();
      reject(new Error(`the server still held the connection after ${giveUpMs} ms`));
    }, giveUpMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(start);
      clearInterval(ticker);
      clearTimeout(timer);
      const answer = firstAnswer(Buffer.concat(chunks));
      resolve({ status: answer?.status, head: answer?.head ?? '', closedAfterMs: performance.now() - started });
    });
    if (prefix) socket.write(prefix);
  });
}

export interface Flooded extends Answer {
  /** Body bytes handed to the kernel before the server closed the connection. */
  readonly sentBytes: number;
}

/**
 * Sends `head`, then up to `bodyBytes` of body in 64 KiB writes (raw, or as chunked encoding)
 * until the server closes the connection; resolves with its answer and how much got out. Like a
 * busy client, it reads only a while after its writes first stall: a server that resets the
 * connection right after answering loses that answer.
 */
export function flood(connect: Connect, head: string, bodyBytes: number, chunked: boolean): Promise<Flooded> {
  return new Promise((resolve) => {
    const socket = connect();
    const chunks: Buffer[] = [];
    const piece = Buffer.alloc(64 * 1024, 'x');
    const frame = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
    let sentBytes = 0;
    let closed = false;
    let readLater: NodeJS.Timeout | undefined;
    const pump = (): void => {
      while (!closed && sentBytes < bodyBytes) {
        const ok = socket.write(frame, (err) => {
          if (!err) sentBytes += piece.length;
        });
        if (!ok) {
          if (!readLater) readLater = setTimeout(() => socket.resume(), READ_LATE_MS);
          socket.once('drain', pump);
          return;
        }
      }
      if (!closed && chunked) socket.write('0\r\n\r\n');
    };
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      clearTimeout(readLater);
      const answer = firstAnswer(Buffer.concat(chunks));
      resolve({ status: answer?.status, head: answer?.head ?? '', sentBytes });
    });
    socket.pause();
    socket.write(head);
    pump();
  });
}

// Well within the time a server lingers after answering, so the answer can be read in time.
const READ_LATE_MS = LINGER_MS / 4;

/** A request that sent its head and most of its body, and then holds its connection without finishing. */
export interface Held {
  /** Resolves once the body is all handed to the kernel, or the server closed the connection first. */
  readonly sent: Promise<void>;
  /** Resolves with the server's answer once it closes the connection. */
  readonly closed: Promise<Answer>;
  /** Ends it from our side. */
  readonly drop: () => void;
}

/**
 * Sends `head` and `bodyBytes` of body (raw, or as chunks, never the last one) as fast as the
 * server takes them, then sends nothing more and keeps the connection open: a body that is never
 * finished, which a server buffering bodies keeps until its request timeout.
 */
export function holdOpen(connect: Connect, head: string, bodyBytes: number, chunked: boolean): Held {
  const socket = connect();
  const chunks: Buffer[] = [];
  const piece = Buffer.alloc(64 * 1024, 'x');
  let written = 0;
  let markSent!: () => void;
  const sent = new Promise<void>((resolve) => (markSent = resolve));
  const closed = new Promise<Answer>((resolve) => {
    socket.on('close', () => {
      markSent();
      const answer = firstAnswer(Buffer.concat(chunks));
      resolve({ status: answer?.status, head: answer?.head ?? '' });
    });
  });
  const pump = (): void => {
    while (written < bodyBytes && !socket.destroyed) {
      const n = Math.min(piece.length, bodyBytes - written);
      written += n;
      const data = chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), piece.subarray(0, n), Buffer.from('\r\n')]) : piece.subarray(0, n);
      const last = written >= bodyBytes;
      const ok = socket.write(data, last ? () => markSent() : undefined);
      if (!ok && !last) return void socket.once('drain', pump);
    }
  };
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  socket.write(head);
  pump();
  return { sent, closed, drop: () => socket.destroy() };
}

/** Placed in generated headers and bodies; no log line may ever contain it. */
export const SECRET_MARKER = 'fuzz-credential-7f3a9c';

/** Requests no server should choke on, starting with the one that used to end the process. */
export const GARBAGE: readonly string[] = [
  'POST http://[ HTTP/1.1\r\n\r\n',
  'POST http://[ HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n',
  'GET http://[ HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET http://[::1 HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET http://a:b@[ HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET // HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET * HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET /%zz%00 HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET /\0 HTTP/1.1\r\nHost: x\r\n\r\n',
  'G\0T / HTTP/1.1\r\nHost: x\r\n\r\n',
  'FOO / HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
  'GET /\r\n\r\n',
  '\r\n\r\n\r\n',
  '\0\0\0\0\0\0\0\0',
  `GET /${'a'.repeat(64 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`,
  `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(64 * 1024)}\r\n\r\n`,
  'GET / HTTP/1.1\r\nHost: x\r\nBroken header line\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: x\r\n: no name\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!',
  'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabc\r\n0\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n',
  'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc',
  'GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
  'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: x\r\n\r\n',
];

/** The same requests aimed at `path`: a known path gets past routing to the handler. */
export function garbageFor(path: string): string[] {
  return GARBAGE.map((r) => r.replace(/^(\S+) \/(?= )/, `$1 ${path}`));
}

const byte = fc.string({ unit: 'binary-ascii', maxLength: 40 });
const crlf = fc.constantFrom('\r\n', '\r\n', '\r\n', '\n', '\r', '\r\r\n');

function method(): fc.Arbitrary<string> {
  return fc.oneof(fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT', 'PRI', 'SEARCH', 'get', ''), byte);
}

function target(paths: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...paths, '/', '*', 'http://[', 'http://[::1', '//x', '/%', '/%zz', '/\0', `/x?token=${SECRET_MARKER}`),
    fc.tuple(fc.constantFrom(...paths), byte).map(([p, q]) => `${p}?${q}`),
    fc.tuple(fc.constantFrom('http://', 'https://', 'http://[', ''), byte).map(([s, r]) => s + r),
    byte,
    fc.integer({ min: 1, max: 40_000 }).map((n) => `/${'a'.repeat(n)}`),
  );
}

const version = fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/0.9', 'HTTP/2.0', 'HTTP/1.1 x', 'http/1.1', '');

function header(): fc.Arbitrary<string> {
  const name = fc.oneof(fc.constantFrom('Host', 'Content-Length', 'Transfer-Encoding', 'Content-Type', 'Expect', 'Connection', 'Upgrade', 'Authorization'), byte);
  const value = fc.oneof(
    fc.constantFrom('chunked', 'gzip, chunked', 'identity', '100-continue', 'close', 'keep-alive', 'Upgrade', 'h2c', 'application/json', '0', '-1', '1e3', ' 7 ', '18446744073709551616'),
    fc.constant(`Bearer ${SECRET_MARKER}`),
    fc.nat(100_000).map(String),
    byte,
    fc.integer({ min: 1, max: 40_000 }).map((n) => 'v'.repeat(n)),
  );
  return fc.oneof({ weight: 5, arbitrary: fc.tuple(name, value).map(([n, v]) => `${n}: ${v}`) }, { weight: 1, arbitrary: byte });
}

/** Chunked framing, right or subtly wrong. */
function chunked(): fc.Arbitrary<string> {
  const size = fc.oneof(fc.constant(''), fc.constantFrom('zz', '-1', 'fffffffffffffffff', '0x10', '5;ext=1'), fc.nat(64).map((n) => n.toString(16)));
  return fc.array(fc.tuple(size, byte), { maxLength: 5 }).map((chunks) => `${chunks.map(([s, d]) => `${s}\r\n${d}\r\n`).join('')}0\r\n\r\n`);
}

/** Bodies a client might send the webhook: not JSON, JSON of any shape, and near-AdmissionReviews. */
export function body(): fc.Arbitrary<string> {
  const anything = fc.jsonValue({ maxDepth: 3 });
  const nearReview = fc.record(
    {
      apiVersion: fc.oneof(fc.constant('admission.k8s.io/v1'), anything),
      kind: fc.oneof(fc.constant('AdmissionReview'), anything),
      request: fc.oneof(
        fc.record(
          {
            uid: fc.oneof(fc.constant('fuzz-uid'), anything),
            operation: fc.oneof(fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT'), anything),
            kind: fc.oneof(fc.constant({ group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', kind: 'Cluster' }), anything),
            name: anything,
            object: fc.oneof(
              fc.record({ metadata: fc.oneof(fc.record({ name: anything }, { requiredKeys: [] }), anything), spec: fc.oneof(fc.record({ clusterID: anything }, { requiredKeys: [] }), anything) }, { requiredKeys: [] }),
              anything,
            ),
          },
          { requiredKeys: [] },
        ),
        anything,
      ),
      secret: fc.constant(SECRET_MARKER),
    },
    { requiredKeys: [] },
  );
  return fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.json({ maxDepth: 3 }), nearReview.map((r) => JSON.stringify(r)));
}

/** Whole requests, from plausible to plain noise, as raw bytes. */
export function garbageRequest(paths: readonly string[]): fc.Arbitrary<Buffer> {
  const structured = fc
    .record({ method: method(), target: target(paths), version, eol: crlf, headers: fc.array(header(), { maxLength: 8 }), framing: fc.constantFrom('length', 'chunked', 'none'), body: fc.oneof(body(), chunked()) })
    .map(({ method, target, version, eol, headers, framing, body }) => {
      const payload = Buffer.from(body, 'utf8');
      const framed = framing === 'length' ? [`Content-Length: ${payload.length}`] : framing === 'chunked' ? ['Transfer-Encoding: chunked'] : [];
      const head = [`${method} ${target} ${version}`, 'Host: fuzz', ...framed, ...headers].join(eol);
      return Buffer.concat([Buffer.from(`${head}${eol}${eol}`, 'latin1'), payload]);
    });
  return fc.oneof({ weight: 6, arbitrary: structured }, { weight: 1, arbitrary: fc.uint8Array({ maxLength: 4096 }).map((b) => Buffer.from(b)) });
}

/** A POST of `body` to `path` with correct framing, so the body reaches the handler. */
export function post(path: string, payload: string): Buffer {
  const bytes = Buffer.from(payload, 'utf8');
  return Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\nAuthorization: Bearer ${SECRET_MARKER}\r\nContent-Length: ${bytes.length}\r\n\r\n`), bytes]);
}
