import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs, { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, it, mock, type TestContext } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { connect } from './credentials.ts';
import {
  KubeconfigError,
  defaultKubeconfig,
  inClusterKubeconfig,
  loadKubeconfigFile,
  loadKubeconfigFiles,
  parseKubeconfig,
  parsePeerKubeconfig,
  selectContext,
  selectPeer,
} from './kubeconfig.ts';

const PEM = (what: string): string => `-----BEGIN ${what}-----\nMIIB\n-----END ${what}-----\n`;
const b64 = (s: string): string => Buffer.from(s).toString('base64');

type Obj = Record<string, unknown>;
/** A minimal kubeconfig object; `cluster`/`user`/`context` are merged into its single entries. */
function config(parts: { cluster?: Obj; user?: Obj; context?: Obj; top?: Obj } = {}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.1:6443', 'certificate-authority-data': b64(PEM('CERTIFICATE')), ...parts.cluster } }],
    users: [{ name: 'u', user: { token: 'T0KEN-VALUE', ...parts.user } }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', ...parts.context } }],
    'current-context': 'ctx',
    ...parts.top,
  };
}

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function setEnv(t: TestContext, vars: Record<string, string | undefined>): void {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>): void => {
    for (const [k, val] of Object.entries(v)) {
      if (val === undefined) delete process.env[k];
      else process.env[k] = val;
    }
  };
  apply(vars);
  t.after(() => apply(before));
}

/** Asserts a KubeconfigError with exactly `message`, which holds none of `secrets`. */
function refuses(fn: () => unknown, message: string | RegExp, secrets: readonly string[]): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof KubeconfigError, `not a KubeconfigError: ${String(err)}`);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    for (const s of secrets) assert.ok(!err.message.includes(s), `${s} leaked: ${err.message}`);
    return true;
  });
}

const VALUE = 'SECRET-VALUE-9f2c';

describe('peer kubeconfig', () => {
  it('accepts inline credentials for an https server', async () => {
    const text = stringify(
      config({
        cluster: { 'tls-server-name': 'api.example' },
        user: { token: undefined, 'client-certificate-data': b64(PEM('CERTIFICATE')), 'client-key-data': b64(PEM('PRIVATE KEY')) },
        context: { namespace: 'team-a' },
        top: { preferences: {}, extensions: [{ name: 'x', extension: { anything: true } }] },
      }),
    );
    const sel = selectPeer(text);
    assert.equal(sel.server, 'https://10.0.0.1:6443');
    assert.equal(sel.namespace, 'team-a');
    const conn = await connect(sel);
    assert.match(String(conn.tls.cert), /BEGIN CERTIFICATE/);
    assert.match(String(conn.tls.key), /BEGIN PRIVATE KEY/);
    assert.equal(conn.tls.servername, 'api.example');
    assert.equal(conn.tls.rejectUnauthorized, undefined);
    assert.deepEqual(await conn.authHeaders(), {});
  });

  it('refuses every key off the allow-list, naming the key and never its value', () => {
    const cases: [Parameters<typeof config>[0], string][] = [
      [{ user: { 'token-file': `/var/run/${VALUE}` } }, 'users[0].user.token-file'],
      [{ user: { tokenFile: `/var/run/${VALUE}` } }, 'users[0].user.tokenFile'],
      [{ user: { 'client-certificate': `/etc/${VALUE}.crt` } }, 'users[0].user.client-certificate'],
      [{ user: { 'client-key': `/etc/${VALUE}.key` } }, 'users[0].user.client-key'],
      [{ user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: VALUE, args: ['-c', 'id'] } } }, 'users[0].user.exec'],
      [{ user: { 'auth-provider': { name: 'oidc', config: { 'id-token': VALUE } } } }, 'users[0].user.auth-provider'],
      [{ user: { username: VALUE } }, 'users[0].user.username'],
      [{ user: { password: VALUE } }, 'users[0].user.password'],
      [{ user: { as: VALUE } }, 'users[0].user.as'],
      [{ user: { 'as-groups': [VALUE] } }, 'users[0].user.as-groups'],
      [{ user: { 'as-uid': VALUE } }, 'users[0].user.as-uid'],
      [{ user: { 'as-user-extra': { k: [VALUE] } } }, 'users[0].user.as-user-extra'],
      [{ user: { extensions: [{ name: VALUE }] } }, 'users[0].user.extensions'],
      [{ cluster: { 'certificate-authority': `/var/run/${VALUE}/ca.crt` } }, 'clusters[0].cluster.certificate-authority'],
      [{ cluster: { 'insecure-skip-tls-verify': true } }, 'clusters[0].cluster.insecure-skip-tls-verify'],
      [{ cluster: { 'proxy-url': `http://${VALUE}:3128` } }, 'clusters[0].cluster.proxy-url'],
      [{ cluster: { 'disable-compression': true } }, 'clusters[0].cluster.disable-compression'],
      [{ cluster: { 'unknown-key': VALUE } }, 'clusters[0].cluster.unknown-key'],
      [{ context: { extensions: [{ name: VALUE }] } }, 'contexts[0].context.extensions'],
      [{ top: { 'unknown-top': VALUE } }, 'unknown-top'],
    ];
    for (const [parts, key] of cases) {
      refuses(() => parsePeerKubeconfig(stringify(config(parts))), `${key} is not allowed in a peer kubeconfig`, [VALUE]);
    }
    const entryExtra = config();
    (entryExtra.users as Obj[])[0]!.extra = VALUE;
    refuses(() => parsePeerKubeconfig(stringify(entryExtra)), 'users[0].extra is not allowed in a peer kubeconfig', [VALUE]);
  });

  it('refuses keys of entries that are not selected too', () => {
    const kc = config();
    (kc.users as Obj[]).push({ name: 'other', user: { 'token-file': VALUE } });
    refuses(() => parsePeerKubeconfig(stringify(kc)), 'users[1].user.token-file is not allowed in a peer kubeconfig', [VALUE]);
  });

  it('does not echo a crafted key', () => {
    const key = `x: ${VALUE}\nnewline`;
    refuses(() => parsePeerKubeconfig(JSON.stringify(config({ user: { [key]: 'v' } }))), 'users[0].user.<unexpected key> is not allowed in a peer kubeconfig', [VALUE]);
  });

  it('refuses a server that is not https, not a URL or carries credentials', () => {
    refuses(() => parsePeerKubeconfig(stringify(config({ cluster: { server: `http://${VALUE}:8080` } }))), 'clusters[0].cluster.server must be an https URL', [VALUE]);
    refuses(() => parsePeerKubeconfig(stringify(config({ cluster: { server: `${VALUE} not a url` } }))), 'clusters[0].cluster.server is not a valid URL', [VALUE]);
    refuses(() => parsePeerKubeconfig(stringify(config({ cluster: { server: `https://me:${VALUE}@10.0.0.1` } }))), 'clusters[0].cluster.server must not carry credentials', [VALUE]);
  });

  it('applies an override, refusing an http address by the name of its field', async () => {
    const text = stringify(config());
    const sel = selectPeer(text, { server: { address: 'https://1.2.3.4/', field: 'the override' }, caData: b64('OTHER CA') });
    assert.equal(sel.server, 'https://1.2.3.4');
    assert.equal(String((await connect(sel)).tls.ca), 'OTHER CA');
    refuses(() => selectPeer(text, { server: { address: `http://${VALUE}`, field: 'the override' } }), 'the override must be an https URL', [VALUE]);
  });

  it('takes only host and server names TLS can send: at most 253 characters, labels of at most 63', () => {
    const text = stringify(config());
    const long = 'a'.repeat(300);
    refuses(() => selectPeer(text, { server: { address: `https://${long}`, field: 'the override' } }), "the override's host name is not a DNS name (at most 253 characters, labels of at most 63)", []);
    refuses(() => selectPeer(text, { server: { address: `https://${'b'.repeat(64)}.example`, field: 'the override' } }), /host name is not a DNS name/, []);
    refuses(() => selectPeer(stringify(config({ cluster: { server: `https://${long}:6443` } }))), /host name is not a DNS name/, []);
    refuses(() => selectPeer(stringify(config({ cluster: { 'tls-server-name': long } }))), /tls-server-name is not a DNS name/, []);
    // IP addresses, and names at the limits, are taken.
    for (const address of ['https://1.2.3.4', 'https://[::1]:6443', `https://${['c'.repeat(63), 'd'.repeat(63), 'e'.repeat(63), 'f'.repeat(61)].join('.')}`]) {
      assert.equal(selectPeer(text, { server: { address, field: 'the override' } }).server, address);
    }
  });

  it('requires a user and a defined context', () => {
    refuses(() => selectPeer(stringify(config({ context: { user: undefined } }))), 'the current context names no user', []);
    refuses(() => selectPeer(stringify(config({ top: { 'current-context': VALUE } }))), 'the current context is not defined', [VALUE]);
    refuses(() => selectPeer(stringify(config({ context: { user: VALUE } }))), "the context's user is not defined", [VALUE]);
  });

  it('reports bad YAML by position only', () => {
    refuses(() => parsePeerKubeconfig(`users:\n- name: u\n  user: {token: ${VALUE}\n bad: [`), /^not valid YAML \(line \d+, column \d+\)$/, [VALUE]);
    refuses(() => parseKubeconfig(`a: *${VALUE}`), 'not valid YAML (bad alias)', [VALUE]);
    refuses(() => parsePeerKubeconfig(`- ${VALUE}`), 'the kubeconfig must be a mapping', [VALUE]);
  });

  it('refuses duplicate keys at their position, as the yaml package would', () => {
    const duplicates: [string, string][] = [
      [`token: ${VALUE}\ntoken: x`, '(line 2, column 1)'],
      [`users:\n- name: u\n  user:\n    token: ${VALUE}\n    token: x`, '(line 5, column 5)'],
      [`preferences: {a: ${VALUE}, b: 1, a: 2}`, '(line 1, column 43)'],
      // Equal values however written: 0x1 is 1, ~ is null.
      [`preferences:\n  1: ${VALUE}\n  0x1: x`, '(line 3, column 3)'],
      [`preferences:\n  ~: ${VALUE}\n  null: x`, '(line 3, column 3)'],
      // A nested duplicate before the outer one is reported first in a flow mapping...
      [`preferences: {a: 1, a: {b: ${VALUE}, b: 2}}`, '(line 1, column 47)'],
      // ...and after it in a block mapping.
      [`preferences:\n  a: 1\n  a: {b: ${VALUE}, b: 2}`, '(line 3, column 3)'],
    ];
    for (const [text, position] of duplicates) {
      refuses(() => parsePeerKubeconfig(text), `not valid YAML ${position}`, [VALUE]);
      refuses(() => parseKubeconfig(text), `not valid YAML ${position}`, [VALUE]);
    }
    // Different values are different keys, NaN included, and so are keys that are not scalars.
    for (const text of ['preferences: {1: a, "1": b}', 'preferences: {.nan: a, .nan: b}', 'preferences: {[a]: 1, [a]: 2}', 'preferences: {a: {b: 1}, b: {b: 2}}']) {
      assert.doesNotThrow(() => parsePeerKubeconfig(text), text);
    }
  });

  it('finds duplicate keys in time linear in the keys', () => {
    // Many keys in one mapping against as many spread over one-key mappings: the package's own
    // check compared every key with every earlier one of its mapping (3-5x here). Our kubeconfig
    // holds more keys than a peer's may, and both are checked alike.
    const n = 12_000;
    const wide = `preferences:\n${Array.from({ length: n }, (_, i) => `  k${i}: 0\n`).join('')}`;
    const spread = `preferences:\n  s:\n${Array.from({ length: n }, (_, i) => `  - k${i}: 0\n`).join('')}`;
    const timed = (text: string): number => {
      const start = performance.now();
      parseKubeconfig(text);
      return performance.now() - start;
    };
    const ratios: number[] = [];
    for (let round = 0; round < 3; round++) ratios.push(timed(wide) / timed(spread));
    const median = [...ratios].sort((a, b) => a - b)[1]!;
    assert.ok(median < 2, `one wide mapping took ${median.toFixed(2)}x as long as many small ones`);
  });

  it('refuses a kubeconfig over its size limit before parsing it', () => {
    const padded = (bytes: number, unit = 'x'): string => {
      const text = stringify(config({ top: { preferences: { pad: 'PAD' } } }));
      return text.replace('PAD', unit.repeat((bytes - Buffer.byteLength(text) + 3) / Buffer.byteLength(unit)));
    };
    assert.equal(Buffer.byteLength(padded(64 << 10)), 64 << 10);
    assert.equal(selectPeer(padded(64 << 10)).server, 'https://10.0.0.1:6443');
    refuses(() => parsePeerKubeconfig(padded((64 << 10) + 1)), 'the kubeconfig is larger than 64 KiB', []);
    // Bytes of UTF-8 count, not characters.
    refuses(() => parsePeerKubeconfig(padded((64 << 10) + 2, 'é')), 'the kubeconfig is larger than 64 KiB', []);
    // The kubeconfig of the security review: 30k keys, 349 KB, took 10 s to accept.
    const keys = Array.from({ length: 30_000 }, (_, i) => `  k${i}: ${VALUE}`).join('\n');
    refuses(() => parsePeerKubeconfig(`apiVersion: v1\nkind: Config\npreferences:\n${keys}\n`), 'the kubeconfig is larger than 64 KiB', [VALUE]);
    // Ours may be far bigger, not without bound.
    assert.equal(selectContext(parseKubeconfig(padded(1 << 20))).server, 'https://10.0.0.1:6443');
    refuses(() => parseKubeconfig(padded((16 << 20) + 1)), 'the kubeconfig is larger than 16 MiB', []);
  });

  it('refuses YAML aliases, which ours may use', () => {
    const text = `clusters:\n- name: c\n  cluster: &c {server: "https://10.0.0.1"}\n- name: d\n  cluster: *c\n`;
    refuses(() => parsePeerKubeconfig(text), 'YAML aliases are not allowed in a peer kubeconfig', []);
    assert.equal(parseKubeconfig(text).clusters.get('d')?.server, 'https://10.0.0.1');
    // An anchor alone is harmless.
    assert.equal(parsePeerKubeconfig(text.replace('*c', '{server: "https://10.0.0.2"}')).clusters.get('c')?.server, 'https://10.0.0.1');
  });

  it('never touches the filesystem, even for a token-file that names a readable file', async (t) => {
    const file = join(tempDir(t), 'token');
    const content = 'FILE-CONTENT-7d1e';
    writeFileSync(file, content);
    const spied = ['readFileSync', 'openSync', 'existsSync', 'statSync', 'accessSync', 'readFile', 'open', 'stat'] as const;
    const spies = spied.map((name) => mock.method(fs, name));
    syncBuiltinESMExports();
    let refusal: unknown;
    let ownCalls: number;
    try {
      try {
        parsePeerKubeconfig(stringify(config({ user: { token: undefined, 'token-file': file } })));
      } catch (err) {
        refusal = err;
      }
      const conn = await connect(selectPeer(stringify(config())));
      await conn.authHeaders();
      conn.invalidate();
      await conn.authHeaders();
      const peerCalls = spies.reduce((n, s) => n + s.mock.callCount(), 0);
      assert.equal(peerCalls, 0);
      // The spies do see our loader's reads: the same token-file in our own kubeconfig is read.
      await (await connect(selectContext(parseKubeconfig(stringify(config({ user: { token: undefined, 'token-file': file } })))))).authHeaders();
      ownCalls = spies.reduce((n, s) => n + s.mock.callCount(), 0);
    } finally {
      for (const s of spies) s.mock.restore();
      syncBuiltinESMExports();
    }
    assert.ok(ownCalls > 0);
    assert.ok(refusal instanceof KubeconfigError);
    assert.equal(refusal.message, 'users[0].user.token-file is not allowed in a peer kubeconfig');
    assert.ok(!JSON.stringify({ message: refusal.message, stack: refusal.stack }).includes(content));
  });

  it('accepts only allow-listed content, else refuses without quoting a value (property)', () => {
    const PLACES = ['top', 'clusterEntry', 'cluster', 'userEntry', 'user', 'contextEntry', 'context'] as const;
    type Place = (typeof PLACES)[number];
    const ALLOWED: Record<Place, readonly string[]> = {
      top: ['apiVersion', 'kind', 'clusters', 'users', 'contexts', 'current-context', 'preferences', 'extensions'],
      clusterEntry: ['name', 'cluster'],
      cluster: ['server', 'certificate-authority-data', 'tls-server-name'],
      userEntry: ['name', 'user'],
      user: ['token', 'client-certificate-data', 'client-key-data'],
      contextEntry: ['name', 'context'],
      context: ['cluster', 'user', 'namespace'],
    };
    const refusedKeys = [
      ...['token-file', 'tokenFile', 'certificate-authority', 'client-certificate', 'client-key', 'exec', 'auth-provider', 'username', 'password'],
      ...['as', 'as-groups', 'as-uid', 'as-user-extra', 'proxy-url', 'insecure-skip-tls-verify', 'disable-compression', '__proto__'],
    ];
    // Every secret carries a ':' that no echoed key label can contain.
    const secret = fc.string({ minLength: 1, maxLength: 10 }).map((s) => `SECRET:${s}`);
    const value = fc.oneof(secret, fc.array(secret, { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 5 }), secret, { maxKeys: 2 }), fc.boolean(), fc.constant(null));
    const key = fc.oneof(fc.constantFrom(...Object.values(ALLOWED).flat(), ...refusedKeys), fc.string({ maxLength: 12 }));
    const extra = fc.record({ place: fc.constantFrom(...PLACES), key, value });
    fc.assert(
      fc.property(fc.array(extra, { maxLength: 4 }), (extras) => {
        const kc = config();
        const [clusterEntry, userEntry, contextEntry] = [(kc.clusters as Obj[])[0]!, (kc.users as Obj[])[0]!, (kc.contexts as Obj[])[0]!];
        const target: Record<Place, Obj> = {
          top: kc,
          clusterEntry,
          cluster: clusterEntry.cluster as Obj,
          userEntry,
          user: userEntry.user as Obj,
          contextEntry,
          context: contextEntry.context as Obj,
        };
        for (const e of extras) Object.defineProperty(target[e.place], e.key, { value: e.value, enumerable: true, configurable: true, writable: true });
        const text = JSON.stringify(kc);
        const secrets = [...text.matchAll(/SECRET:(?:[^"\\]|\\.)*/g)].map((m) => JSON.parse(`"${m[0]}"`) as string);
        let sel;
        try {
          sel = selectPeer(text);
        } catch (err) {
          assert.ok(err instanceof KubeconfigError, String(err));
          for (const s of secrets) assert.ok(!err.message.includes(s), `${s} leaked: ${err.message}`);
          return;
        }
        // An extra that replaced an entry or its body took the keys set on the old one out of the text.
        const inText: Record<Place, boolean> = {
          top: true,
          clusterEntry: (kc.clusters as Obj[] | null)?.[0] === clusterEntry,
          cluster: (kc.clusters as Obj[] | null)?.[0] === clusterEntry && clusterEntry.cluster === target.cluster,
          userEntry: (kc.users as Obj[] | null)?.[0] === userEntry,
          user: (kc.users as Obj[] | null)?.[0] === userEntry && userEntry.user === target.user,
          contextEntry: (kc.contexts as Obj[] | null)?.[0] === contextEntry,
          context: (kc.contexts as Obj[] | null)?.[0] === contextEntry && contextEntry.context === target.context,
        };
        for (const e of extras) assert.ok(!inText[e.place] || ALLOWED[e.place].includes(e.key), `${e.place}.${e.key} was accepted`);
        const defined = (o: object): string[] => Object.entries(o).filter(([, v]) => v !== undefined).map(([k]) => k);
        for (const k of defined(sel.user ?? {})) assert.ok(['token', 'certData', 'keyData'].includes(k), `user.${k}`);
        for (const k of defined(sel.cluster)) assert.ok(['server', 'caData', 'tlsServerName'].includes(k), `cluster.${k}`);
      }),
      { numRuns: 500 },
    );
  });
});

describe('own kubeconfig', () => {
  it('re-reads a rotated token-file after a minute or at once after invalidate()', async (t) => {
    const file = join(tempDir(t), 'token');
    writeFileSync(file, 'token-1\n');
    mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-01-01T00:00:00Z') });
    t.after(() => mock.timers.reset());
    const conn = await connect(selectContext(parseKubeconfig(stringify(config({ user: { token: undefined, 'token-file': file } })))));
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer token-1' });
    writeFileSync(file, 'token-2');
    mock.timers.tick(30_000);
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer token-1' });
    conn.invalidate();
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer token-2' });
    writeFileSync(file, 'token-3');
    mock.timers.tick(60_000);
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer token-3' });
    // A file that disappears keeps the last token rather than failing every request.
    rmSync(file);
    conn.invalidate();
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer token-3' });
  });

  it('fails to connect when the token-file cannot be read and no token stands in', async () => {
    const sel = selectContext(parseKubeconfig(stringify(config({ user: { token: undefined, 'token-file': '/nonexistent/token' } }))));
    await assert.rejects(connect(sel), /cannot read token-file \/nonexistent\/token: ENOENT/);
  });

  it('merges KUBECONFIG files: missing ones skipped, the first to set an entry wins', async (t) => {
    const dir = tempDir(t);
    const a = join(dir, 'a.yaml');
    const b = join(dir, 'sub', 'b.yaml');
    mkdirSync(join(dir, 'sub'));
    writeFileSync(
      a,
      stringify({
        clusters: [{ name: 'shared', cluster: { server: 'https://from-a' } }],
        users: [{ name: 'ua', user: { token: 'ta' } }],
        contexts: [{ name: 'one', context: { cluster: 'shared', user: 'ua' } }],
      }),
    );
    writeFileSync(join(dir, 'sub', 'token'), 'tb');
    writeFileSync(
      b,
      stringify({
        clusters: [{ name: 'shared', cluster: { server: 'https://from-b' } }],
        users: [{ name: 'ub', user: { 'token-file': 'token' } }],
        contexts: [{ name: 'one', context: { cluster: 'shared', user: 'ub' } }, { name: 'two', context: { cluster: 'shared', user: 'ub', namespace: 'ns-b' } }],
        'current-context': 'two',
      }),
    );
    setEnv(t, { KUBECONFIG: [join(dir, 'missing'), a, '', b, a].join(delimiter) });
    const kc = defaultKubeconfig();
    assert.equal(kc.currentContext, 'two');
    const two = selectContext(kc);
    assert.equal(two.server, 'https://from-a');
    assert.equal(two.namespace, 'ns-b');
    // b's relative token-file resolves against b's directory, not a's or the working directory.
    assert.deepEqual(await (await connect(two)).authHeaders(), { Authorization: 'Bearer tb' });
    assert.deepEqual(await (await connect(selectContext(kc, 'one'))).authHeaders(), { Authorization: 'Bearer ta' });
    assert.throws(() => loadKubeconfigFiles([join(dir, 'missing')]), /none of the kubeconfig files exists/);
    writeFileSync(a, 'clusters: [');
    assert.throws(() => loadKubeconfigFiles([a]), (e: unknown) => e instanceof KubeconfigError && e.message.startsWith(`${a}: not valid YAML (line`));
  });

  it('resolves relative certificate paths against the kubeconfig file', async (t) => {
    const dir = tempDir(t);
    mkdirSync(join(dir, 'pki'));
    writeFileSync(join(dir, 'pki', 'ca.crt'), PEM('CERTIFICATE'));
    writeFileSync(join(dir, 'pki', 'client.crt'), 'CLIENT CERT');
    writeFileSync(join(dir, 'pki', 'client.key'), 'CLIENT KEY');
    const file = join(dir, 'config');
    const cluster = { 'certificate-authority-data': undefined, 'certificate-authority': 'pki/ca.crt' };
    writeFileSync(file, stringify(config({ cluster, user: { token: undefined, 'client-certificate': 'pki/client.crt', 'client-key': join(dir, 'pki', 'client.key') } })));
    const sel = selectContext(loadKubeconfigFile(file));
    assert.equal(sel.cluster.caFile, join(dir, 'pki', 'ca.crt'));
    const conn = await connect(sel);
    assert.match(String(conn.tls.ca), /BEGIN CERTIFICATE/);
    assert.equal(String(conn.tls.cert), 'CLIENT CERT');
    assert.equal(String(conn.tls.key), 'CLIENT KEY');
    assert.deepEqual(await conn.authHeaders(), {});
  });

  it('uses client certificate data, insecure-skip-tls-verify and tls-server-name', async () => {
    const sel = selectContext(
      parseKubeconfig(
        stringify(
          config({
            cluster: { 'certificate-authority-data': undefined, 'insecure-skip-tls-verify': true, 'tls-server-name': 'kubernetes' },
            user: { token: undefined, 'client-certificate-data': b64('CERT DATA'), 'client-key-data': b64('KEY DATA') },
          }),
        ),
      ),
    );
    const conn = await connect(sel);
    assert.deepEqual(conn.tls, { cert: Buffer.from('CERT DATA'), key: Buffer.from('KEY DATA'), rejectUnauthorized: false, servername: 'kubernetes' });
  });

  it('sends basic auth and impersonation headers', async () => {
    const sel = selectContext(parseKubeconfig(stringify(config({ user: { token: undefined, username: 'admin', password: 'pw', as: 'jane', 'as-uid': '42', 'as-groups': ['devs'] } }))));
    assert.deepEqual(await (await connect(sel)).authHeaders(), {
      Authorization: `Basic ${b64('admin:pw')}`,
      'Impersonate-User': 'jane',
      'Impersonate-Uid': '42',
      'Impersonate-Group': 'devs',
    });
    assert.throws(() => selectContext(parseKubeconfig(stringify(config({ user: { 'as-groups': ['a', 'b'] } })))), /users\[0\]\.user\.as-groups with more than one group is not supported/);
  });

  it('refuses what it cannot honour only in the selected entries', () => {
    const kc = config({ cluster: { 'proxy-url': 'http://proxy:3128' } });
    (kc.clusters as Obj[]).push({ name: 'direct', cluster: { server: 'http://127.0.0.1:8080' } });
    (kc.contexts as Obj[]).push({ name: 'direct', context: { cluster: 'direct' } });
    const parsed = parseKubeconfig(stringify(kc));
    assert.throws(() => selectContext(parsed), /clusters\[0\]\.cluster\.proxy-url is not supported/);
    const direct = selectContext(parsed, 'direct');
    assert.equal(direct.server, 'http://127.0.0.1:8080');
    assert.equal(direct.user, undefined);
  });

  it('reads the in-cluster service account under a root prefix', async (t) => {
    const root = tempDir(t);
    const dir = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'token'), 'sa-token\n');
    writeFileSync(join(dir, 'ca.crt'), PEM('CERTIFICATE'));
    writeFileSync(join(dir, 'namespace'), 'cluster-registry\n');
    setEnv(t, { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' });
    const sel = selectContext(inClusterKubeconfig(root));
    assert.equal(sel.server, 'https://[fd00::1]:443');
    assert.equal(sel.namespace, 'cluster-registry');
    const conn = await connect(sel);
    assert.match(String(conn.tls.ca), /BEGIN CERTIFICATE/);
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer sa-token' });
    setEnv(t, { KUBERNETES_SERVICE_HOST: undefined });
    assert.throws(() => inClusterKubeconfig(root), /not running in a cluster/);
  });

  it('runs an exec plugin through client-node, loaded only then', async () => {
    const credential = { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-plugin' } };
    const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: ['-e', `console.log(${JSON.stringify(JSON.stringify(credential))})`] };
    const conn = await connect(selectContext(parseKubeconfig(stringify(config({ user: { token: undefined, exec, as: 'jane' } })))));
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer from-plugin', 'Impersonate-User': 'jane' });
    conn.invalidate();
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer from-plugin', 'Impersonate-User': 'jane' });
  });

  it('does not load client-node for a plain kubeconfig', () => {
    const script = `
      import { registerHooks } from 'node:module';
      let loaded = false;
      registerHooks({ resolve(spec, ctx, next) { if (spec.startsWith('@kubernetes/client-node')) loaded = true; return next(spec, ctx); } });
      const { ClusterConfig } = await import(${JSON.stringify(new URL('./index.ts', import.meta.url).href)});
      await (await ClusterConfig.fromString(${JSON.stringify(stringify(config()))}).connection()).authHeaders();
      console.log(loaded);
    `;
    assert.equal(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim(), 'false');
  });
});
