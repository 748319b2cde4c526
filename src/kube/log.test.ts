import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { createLogger, levelForVerbosity, redact, redactString } from './log.ts';

function capture(opts: Parameters<typeof createLogger>[0] = {}): { lines: string[]; log: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  return { lines, log: createLogger({ ...opts, destination: { write: (l: string) => lines.push(l) } }) };
}

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- cluster: {server: https://x, certificate-authority-data: QUJD}
  name: c
users:
- name: u
  user: {token: s3cr3t-token}
`;

// The redaction this module did before it redacted fields ahead of serialisation: every finished
// line parsed, redacted and serialised again. Kept here only as the oracle for what must be
// redacted and as the benchmark's baseline; its lines only ever held JSON values.
const baseline = (() => {
  const SECRET_KEYS = new Set(
    [
      'authorization', 'proxy-authorization', 'token', 'bearertoken', 'bearer-token', 'access-token', 'accesstoken',
      'id-token', 'idtoken', 'refresh-token', 'refreshtoken', 'password', 'client-key-data', 'clientkeydata',
      'client-key', 'keydata', 'kubeconfig', 'stringdata', 'cookie', 'set-cookie', 'client-secret',
    ],
  );
  const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;
  const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
  const PEM_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g;
  const KUBECONFIG = /kind:\s*"?Config"?[\s\S]*(users|clusters):|(client-key-data|client-certificate-data|certificate-authority-data)\s*:/;
  function redactString(s: string): string {
    if (KUBECONFIG.test(s)) return '[REDACTED kubeconfig]';
    return s.replace(PEM_KEY, '[REDACTED private key]').replace(BEARER, '$1 [REDACTED]').replace(JWT, '[REDACTED]');
  }
  function redact(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
    if (typeof value === 'string') return redactString(value);
    if (value === null || typeof value !== 'object') return value;
    if (depth > 32 || seen.has(value)) return '[Circular or too deep]';
    seen.add(value);
    try {
      if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1, seen));
      const src = value as Record<string, unknown>;
      const looksLikeSecret = src.kind === 'Secret' || (typeof src.type === 'string' && 'data' in src && 'metadata' in src);
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(src)) {
        out[k] = SECRET_KEYS.has(k.toLowerCase()) || (k === 'data' && looksLikeSecret) ? (v === undefined || v === null || v === '' ? v : '[REDACTED]') : redact(v, depth + 1, seen);
      }
      return out;
    } finally {
      seen.delete(value);
    }
  }
  const redactLine = (line: string): string => `${JSON.stringify(redact(JSON.parse(line)))}\n`;
  // createLogger's options as they were.
  const logger = (write: (line: string) => unknown): ReturnType<typeof createLogger> =>
    pino({ base: null, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) }, hooks: { streamWrite: redactLine } }, { write });
  return { redactString, logger };
})();

/** A line without its time, which differs between two loggers. */
const timeless = (line: string | undefined): string => (line ?? '').replace(/"time":"[^"]*",/, '');

// Pieces that make up or break the credential patterns: prefixes, every kind of whitespace (JSON
// writes some as escapes), quotes, PEM armour, kubeconfig keys, plain words.
const fragments = fc.constantFrom(
  'Bearer', 'Basic', 'bearer', ' ', '\t', '\n', '\r', '\v', '\f', '\u2028', '\u00a0', '\u0000', '"', '\\', ':', '.', '-', '_', '=',
  'abc.def', 'tok3n', 'eyJ', 'eyJhbGciOi', 'eyJzdWIiOiJ4In0', 'c2ln', 'kind:', 'kind', 'Config', 'users:', 'clusters:', 'client-key-data',
  'certificate-authority-data', 'client-certificate-data', '-----BEGIN RSA PRIVATE KEY-----', '-----BEGIN PRIVATE KEY-----',
  '-----END RSA PRIVATE KEY-----', 'MIIE', 'x', 'reconciled', 'ns/name',
);
const suspiciousText = fc.array(fc.oneof(fragments, fc.string({ maxLength: 4 })), { maxLength: 12 }).map((parts) => parts.join(''));

describe('redaction', () => {
  it('removes credentials at any depth without touching the input', () => {
    const input = {
      headers: { Authorization: 'Bearer abc.def', 'user-agent': 'x' },
      nested: { deeper: [{ token: 'T0KVAL', password: 'PWVAL', keep: 'visible' }] },
      secret: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, type: 'Opaque', data: { kubeconfig: 'QUJD' }, stringData: { a: 'b' } },
      list: { items: [{ metadata: { name: 'in-list' }, type: 'k8s.cisco.com/cluster-registry-secret', data: { k: 'v' } }] },
      configMap: { kind: 'ConfigMap', metadata: { name: 'cm' }, data: { visible: 'yes' } },
      key: 'ns/name',
    };
    const before = structuredClone(input);
    const out = JSON.stringify(redact(input));
    assert.deepEqual(input, before);
    for (const s of ['abc.def', 'T0KVAL', 'PWVAL', 'QUJD', '"b"', '"v"']) assert.ok(!out.includes(s), `${s} leaked: ${out}`);
    for (const s of ['visible', 'ns/name', 'in-list', 'user-agent']) assert.ok(out.includes(s), `${s} lost`);
  });

  it('removes tokens, private keys and kubeconfigs inside strings', () => {
    assert.equal(redactString('call failed with Authorization: Bearer eyJhbGciOi.x'), 'call failed with Authorization: Bearer [REDACTED]');
    assert.ok(!redactString('jwt eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln here').includes('eyJ'));
    assert.equal(redactString(KUBECONFIG), '[REDACTED kubeconfig]');
    assert.ok(!redactString('-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----').includes('MIIE'));
  });

  it('survives cycles and any JSON-like value', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    assert.doesNotThrow(() => JSON.stringify(redact(a)));
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        assert.doesNotThrow(() => JSON.stringify(redact(v)));
      }),
    );
  });

  it('a token under any credential key never reaches a log line', () => {
    fc.assert(
      fc.property(fc.constantFrom('token', 'Authorization', 'password', 'bearerToken', 'client-key-data', 'stringData'), fc.array(fc.constantFrom('a', 'b', 'spec'), { maxLength: 5 }), (k, path) => {
        const { lines, log } = capture();
        let obj: Record<string, unknown> = { [k]: 'SUPERSECRETVALUE' };
        for (const p of path) obj = { [p]: obj };
        log.info(obj, 'x');
        log.child(obj).info('y');
        assert.ok(!lines.join('').includes('SUPERSECRETVALUE'));
      }),
    );
  });
});

describe('redaction, as before but cheaper', () => {
  it('redacts any text exactly as before: in a string, as a message and as a field', () => {
    fc.assert(
      fc.property(suspiciousText, (text) => {
        const expected = baseline.redactString(text);
        assert.equal(redactString(text), expected);
        const { lines, log } = capture();
        log.info({ note: text }, text);
        const logged = JSON.parse(lines[0]!);
        assert.equal(logged.msg, expected);
        assert.equal(logged.note, expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('writes the same line as before for any JSON fields, message and bindings', () => {
    // Not "__proto__": the old redaction dropped such keys, see the next test.
    const key = fc.constantFrom('token', 'Authorization', 'data', 'kind', 'type', 'metadata', 'spec', 'note', 'items', 'stringData');
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, suspiciousText, fc.constant('Secret'), fc.integer(), fc.constant(null), fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(key, tie('node'), { maxKeys: 4, noNullPrototype: true })),
    })).node;
    // pino cannot take bindings without a prototype.
    const fields = fc.dictionary(key, value, { maxKeys: 5, noNullPrototype: true });
    fc.assert(
      fc.property(fields, fields, suspiciousText, (bindings, obj, msg) => {
        // A key in both is written twice; the old reparse kept the last.
        fc.pre(Object.keys(obj).every((k) => !(k in bindings)));
        const ours = capture();
        const before: string[] = [];
        const old = baseline.logger((l) => before.push(l));
        ours.log.child(bindings).info(obj, msg);
        old.child(bindings).info(obj, msg);
        assert.equal(timeless(ours.lines[0]), timeless(before[0]));
      }),
      { numRuns: 500 },
    );
  });

  it('redacts under an own "__proto__" key (JSON.parse makes them) and keeps the key', () => {
    const { lines, log } = capture();
    log.info(JSON.parse('{"__proto__":{"token":"S1-token"},"spec":{"__proto__":{"password":"S2-password"}}}'), 'x');
    assert.equal(timeless(lines[0]), '{"level":"info","__proto__":{"token":"[REDACTED]"},"spec":{"__proto__":{"password":"[REDACTED]"}},"msg":"x"}\n');
  });

  it('redacts the bindings of child loggers at any depth, base fields and set bindings, leaving them untouched', () => {
    const { lines, log } = capture();
    const bindings = {
      cluster: 'c1',
      token: 'S1-token',
      headers: { Authorization: 'Bearer S2abcdef', 'user-agent': 'cluster-registry' },
      note: KUBECONFIG,
      secret: { kind: 'Secret', metadata: { name: 'reader' }, data: { token: 'UzM=' } },
      body: Buffer.from('S4-bytes'),
      lastError: new Error('rejected eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'),
    };
    const before = structuredClone({ ...bindings, body: undefined, lastError: undefined });
    const grandchild = log.child(bindings).child({ controller: 'clusters' }).child({ password: 'S5-password' });
    grandchild.info('one');
    grandchild.setBindings({ refreshToken: 'S6-refresh' });
    grandchild.info('two');
    const based = capture({ base: { component: 'webhook', 'client-key-data': 'S7-key' } });
    based.log.info('three');
    // A Secret's shape split between bindings and fields, either way round.
    log.child({ kind: 'Secret' }).info({ data: { 'ca.crt': 'S8-data' } }, 'four');
    log.child({ data: { 'ca.crt': 'S9-data' }, metadata: { name: 'reader' } }).info({ type: 'Opaque' }, 'five');
    const out = [...lines, ...based.lines].join('');
    for (const s of ['S1-token', 'S2abcdef', 's3cr3t-token', 'UzM=', 'S4-bytes', 'eyJhbGci', 'S5-password', 'S6-refresh', 'S7-key', 'S8-data', 'S9-data']) {
      assert.ok(!out.includes(s), `${s} leaked: ${out}`);
    }
    const first = JSON.parse(lines[0]!);
    assert.equal(first.cluster, 'c1');
    assert.equal(first.controller, 'clusters');
    assert.equal(first.headers['user-agent'], 'cluster-registry');
    assert.equal(first.body, '[Buffer 8 bytes]');
    assert.equal(first.lastError.message, 'rejected [REDACTED]');
    assert.equal(JSON.parse(based.lines[0]!).component, 'webhook');
    assert.deepEqual({ ...bindings, body: undefined, lastError: undefined }, before);
  });

  it('redacts errors: messages, causes, own fields, aggregated errors, wherever they are logged', () => {
    const cause = new Error('token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln was rejected');
    const err = Object.assign(new Error('GET /api failed with Authorization: Bearer S1abcdef', { cause }), {
      token: 'S2-token',
      request: { headers: { authorization: 'Basic S3abcdef' }, url: '/api' },
    });
    const aggregate = new AggregateError([new Error('key -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----')], 'all peers failed');
    const { lines, log } = capture();
    log.error(err);
    log.error({ err }, 'reconcile failed');
    log.warn({ result: { error: err } }, 'nested');
    log.error(err, 'failed with %s', 'Bearer S4abcdef');
    log.error({ err: aggregate }, 'aggregate');
    const out = lines.join('');
    for (const s of ['S1abcdef', 'S2-token', 'S3abcdef', 'S4abcdef', 'eyJhbGci', 'MIIE']) assert.ok(!out.includes(s), `${s} leaked: ${out}`);
    const [first, second, third] = lines.map((l) => JSON.parse(l));
    // pino's standard error shape: the cause's message is appended, its stack follows the error's.
    assert.equal(first.msg, 'GET /api failed with Authorization: Bearer [REDACTED]');
    assert.equal(second.err.type, 'Error');
    assert.equal(second.err.message, 'GET /api failed with Authorization: Bearer [REDACTED]: token [REDACTED] was rejected');
    assert.match(second.err.stack, /caused by: Error: token \[REDACTED\] was rejected/);
    assert.equal(second.err.request.url, '/api');
    assert.equal(third.result.error.type, 'Error');
    assert.match(lines[4]!, /\[REDACTED private key\]/);
  });

  it('logs faster than the line-level redaction it replaced', (t) => {
    let bytes = 0;
    // Encoded as a real destination does, which also flattens pino's concatenated line.
    const write = (l: string): void => void (bytes += Buffer.byteLength(l));
    const loggers = {
      before: baseline.logger(write).child({ controller: 'clusters', cluster: 'cluster-1' }),
      now: createLogger({ destination: { write } }).child({ controller: 'clusters', cluster: 'cluster-1' }),
    };
    const rates: Record<keyof typeof loggers, number[]> = { before: [], now: [] };
    for (let round = 0; round < 5; round++) {
      for (const name of ['before', 'now'] as const) {
        const log = loggers[name];
        const n = 10_000;
        const start = performance.now();
        for (let i = 0; i < n; i++) log.info({ key: `ns/object-${i % 100}`, resourceVersion: String(i), generation: 3 }, 'reconciled');
        rates[name].push((n * 1000) / (performance.now() - start));
      }
    }
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;
    const [before, now] = [median(rates.before), median(rates.now)];
    t.diagnostic(`log lines/s: before ${Math.round(before)}, now ${Math.round(now)} (${(now / before).toFixed(2)}x), ${bytes} bytes written`);
    assert.ok(bytes > 0);
  });
});

describe('logger', () => {
  it('writes JSON with child fields, redacts messages and errors', () => {
    const { lines, log } = capture();
    const child = log.child({ cluster: 'c1', controller: 'clusters' }).child({ key: 'ns/a' });
    child.info('request with Bearer secrettoken failed');
    child.error({ err: Object.assign(new Error('bad kubeconfig'), { token: 'tok123' }) }, 'oops');
    const first = JSON.parse(lines[0]!);
    assert.equal(first.cluster, 'c1');
    assert.equal(first.controller, 'clusters');
    assert.equal(first.key, 'ns/a');
    assert.equal(first.level, 'info');
    assert.equal(first.msg, 'request with Bearer [REDACTED] failed');
    assert.ok(!lines[1]!.includes('tok123'));
    assert.match(lines[1]!, /bad kubeconfig/);
  });

  it('maps verbosity like upstream: 0 info, 1 debug, 2+ trace', () => {
    assert.equal(levelForVerbosity(0), 'info');
    assert.equal(levelForVerbosity(1), 'debug');
    assert.equal(levelForVerbosity(4), 'trace');
    const quiet = capture({ verbosity: 0 });
    quiet.log.debug('hidden');
    assert.equal(quiet.lines.length, 0);
    const loud = capture({ verbosity: 1 });
    loud.log.debug('shown');
    assert.equal(loud.lines.length, 1);
  });

  it('console format prints one readable line', () => {
    const { lines, log } = capture({ format: 'console' });
    log.child({ cluster: 'c1' }).warn({ n: 2 }, 'hello');
    assert.match(lines[0]!, /\tWARN\thello\tcluster=c1 n=2\n$/);
  });
});

describe('hostile text', () => {
  /** Median over rounds of how much longer `run` takes on `adversarial` than on `benign`. */
  function slowdown(run: (input: string) => unknown, adversarial: string, benign: string, reps = 1): number {
    const time = (input: string): number => {
      const start = performance.now();
      for (let i = 0; i < reps; i++) run(input);
      return performance.now() - start;
    };
    const ratios: number[] = [];
    for (let round = 0; round < 5; round++) ratios.push(time(adversarial) / time(benign));
    return [...ratios].sort((a, b) => a - b)[2]!;
  }
  const fill = (unit: string, length: number): string => unit.repeat(Math.floor(length / unit.length));

  it('cuts every string of a line to 4096 characters before redacting it, and says so', () => {
    const { lines, log } = capture();
    const long = `${'x'.repeat(4090)}Bearer S1-beyond-the-cut ${'y'.repeat(10_000)}`;
    const pem = `${'p'.repeat(4000)}-----BEGIN PRIVATE KEY-----\nS2-key-material-${'k'.repeat(200)}\n-----END PRIVATE KEY-----`;
    log.error({ err: new Error(long), note: pem, list: [long], nested: { deeper: long } }, 'failed: %s', long);
    log.error(new Error(long));
    const out = lines.join('');
    for (const s of ['S1-beyond', 'S2-key']) assert.ok(!out.includes(s), `${s} leaked`);
    const [first, second] = lines.map((l) => JSON.parse(l));
    const cut = `${'x'.repeat(4090)}Bearer…[truncated ${long.length - 4096} chars]`;
    assert.equal(first.err.message, cut);
    assert.equal(first.list[0], cut);
    assert.equal(first.nested.deeper, cut);
    assert.equal(first.msg, `failed: ${'x'.repeat(4088)}…[truncated ${long.length + 8 - 4096} chars]`);
    assert.match(first.err.stack, /^Error: x{4089}…\[truncated \d+ chars\]$/);
    assert.equal(first.note, `${'p'.repeat(4000)}[REDACTED private key]…[truncated ${pem.length - 4096} chars]`);
    assert.equal(second.msg, cut);
    assert.equal(second.err.message, cut);
    // Strings at the limit are whole.
    log.info({ s: 'z'.repeat(4096) }, 'q'.repeat(4096));
    const third = JSON.parse(lines[2]!);
    assert.equal(third.s, 'z'.repeat(4096));
    assert.equal(third.msg, 'q'.repeat(4096));
  });

  it('redacts in time linear in the text: no pattern rescans it', () => {
    // Each input fills the 4096 characters that are redacted whole; the quadratic patterns this
    // replaced took 20-600x as long on the first three as on the baseline.
    const adversarial = {
      'kind:Config, never users:': fill('kind:Config ', 4096),
      'eyJ after - in one run': fill('x-eyJ', 4096),
      'eyJ repeated': fill('eyJ', 4096),
      'unterminated PEM ends': `-----BEGIN RSA PRIVATE KEY-----${fill('-----END A ', 4000)}`,
      'Bearer and spaces': fill(`Bearer${' '.repeat(100)}!`, 4096),
      'kind: and spaces': fill(`kind:${' '.repeat(100)}`, 4096),
    };
    const benign = fill('Bearer abc ', 4096);
    for (const [name, text] of Object.entries(adversarial)) {
      const x = slowdown(redactString, text, benign, 50);
      assert.ok(x < 5, `${name}: ${x.toFixed(1)}x the baseline`);
    }
  });

  it('logs the error of a template that fails with a long kubeconfig-like text as fast as any', () => {
    // {{ fail (repeat 40000 "kind:Config ") }}: 480 KB that the sync logs; 22-26 s a reconcile before.
    const adversarial = 'kind:Config '.repeat(40_000);
    const { lines, log } = capture();
    const x = slowdown((text) => log.error({ err: new Error(text) }, 'sync failed'), adversarial, 'x'.repeat(adversarial.length));
    assert.ok(x < 5, `${x.toFixed(1)}x the baseline`);
    log.error({ err: new Error(adversarial) }, 'sync failed');
    assert.ok(lines.every((l) => l.length < 10_000));
    assert.match(JSON.parse(lines.at(-1)!).err.message, /^(kind:Config ){341}kind…\[truncated 475904 chars\]$/);
  });

  it('copies an object once, however many of its values are redacted', () => {
    const many = (value: (i: number) => string): object => Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, value(i)]));
    const { lines, log } = capture();
    const [secrets, plain] = [many((i) => `Bearer S${i}-token`), many((i) => `Plain S${i}-token`)];
    const x = slowdown((which) => log.info({ obj: which === 'secrets' ? secrets : plain }, 'x'), 'secrets', 'plain');
    assert.ok(x < 10, `${x.toFixed(1)}x the baseline`);
    assert.equal(JSON.parse(lines[0]!).obj.k4999, 'Bearer [REDACTED]');
  });
});
