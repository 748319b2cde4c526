import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
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
