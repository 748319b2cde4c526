import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, mock } from 'node:test';
import { ClusterConfig } from './config.ts';

const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');
const kubeconfig = (token: string): string => `apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: ${CA}}
- name: c2
  cluster: {server: "https://10.0.0.1", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: ${token}}
contexts:
- name: one
  context: {cluster: c1, user: admin, namespace: team-a}
- name: two
  context: {cluster: c2, user: admin}
current-context: one
`;

describe('ClusterConfig', () => {
  it('turns a kubeconfig into server, TLS material and auth headers', async () => {
    const cfg = ClusterConfig.fromString(kubeconfig('SECRET-TOKEN'));
    assert.equal(cfg.server, 'https://127.0.0.1:6443');
    assert.equal(cfg.namespace, 'team-a');
    const conn = await cfg.connection();
    assert.equal(conn.server.host, '127.0.0.1:6443');
    assert.match(String(conn.tls.ca), /BEGIN CERTIFICATE/);
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer SECRET-TOKEN' });
  });

  it('selects a context and honours insecure-skip-tls-verify', async () => {
    assert.equal(ClusterConfig.fromString(kubeconfig('t')).currentContext, 'one');
    const cfg = ClusterConfig.fromString(kubeconfig('t'), 'two');
    assert.equal(cfg.currentContext, 'two');
    assert.equal(cfg.server, 'https://10.0.0.1');
    assert.equal(cfg.namespace, undefined);
    assert.equal((await cfg.connection()).tls.rejectUnauthorized, false);
    assert.throws(() => ClusterConfig.fromString(kubeconfig('t'), 'three'), /no context "three"/);
  });

  it('never puts kubeconfig content into its errors', () => {
    const broken = `${kubeconfig('LEAKED-TOKEN')}\n  bad: [unclosed`;
    assert.throws(
      () => ClusterConfig.fromString(broken),
      (err: unknown) => err instanceof Error && !err.message.includes('LEAKED') && /^cannot load kubeconfig from string: not valid YAML \(line \d+, column \d+\)$/.test(err.message),
    );
    assert.throws(
      () => ClusterConfig.fromString('apiVersion: v1\nkind: Config\nusers: [{name: u, user: {token: LEAKED}}]'),
      (err: unknown) => err instanceof Error && err.message === 'cannot load kubeconfig from string: the kubeconfig has no current context',
    );
  });

  it('loads a file, its relative paths resolved against its directory', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'kube-config-test-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'token'), 'file-token');
    const file = join(dir, 'config');
    writeFileSync(file, kubeconfig('t').replace('user: {token: t}', 'user: {token-file: token}'));
    const conn = await ClusterConfig.fromFile(file).connection();
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer file-token' });
    assert.throws(() => ClusterConfig.fromFile(join(dir, 'missing')), new RegExp(`^Error: cannot load kubeconfig from file ${join(dir, 'missing')}: cannot read .*: ENOENT$`));
  });

  it('reads KUBECONFIG for the default locations', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'kube-config-test-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'config'), kubeconfig('t'));
    const before = process.env.KUBECONFIG;
    process.env.KUBECONFIG = join(dir, 'config');
    t.after(() => {
      if (before === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = before;
    });
    assert.equal(ClusterConfig.fromFileOrDefault(undefined, 'two').server, 'https://10.0.0.1');
  });

  it('reads a peer kubeconfig in peer mode, with our override', async () => {
    const inline = kubeconfig('PEER-TOKEN').replace(/- name: c2\n.*\n/, '').replace(/- name: two\n.*\n/, '');
    const peer = ClusterConfig.forPeer(inline, { server: { address: 'https://192.0.2.1:443', field: 'override' }, caData: Buffer.from('OTHER').toString('base64') });
    assert.equal(peer.server, 'https://192.0.2.1:443');
    const conn = await peer.connection();
    assert.equal(String(conn.tls.ca), 'OTHER');
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer PEER-TOKEN' });
    // The same text is fine for us but not from a peer: c2 skips TLS verification.
    assert.throws(() => ClusterConfig.forPeer(kubeconfig('PEER-TOKEN')), { name: 'KubeconfigError', message: 'clusters[1].cluster.insecure-skip-tls-verify is not allowed in a peer kubeconfig' });
  });

  it('re-reads a rotated in-cluster token', async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'kube-config-test-'));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const dir = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'token'), 'token-1');
    writeFileSync(join(dir, 'ca.crt'), Buffer.from(CA, 'base64'));
    writeFileSync(join(dir, 'namespace'), 'cluster-registry');
    process.env.KUBERNETES_SERVICE_HOST = '10.96.0.1';
    process.env.KUBERNETES_SERVICE_PORT = '443';
    t.after(() => {
      delete process.env.KUBERNETES_SERVICE_HOST;
      delete process.env.KUBERNETES_SERVICE_PORT;
    });
    mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-01-01T00:00:00Z') });
    t.after(() => mock.timers.reset());
    const cfg = ClusterConfig.inCluster(root);
    assert.equal(cfg.server, 'https://10.96.0.1:443');
    assert.equal(cfg.namespace, 'cluster-registry');
    const conn = await cfg.connection();
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer token-1' });
    writeFileSync(join(dir, 'token'), 'token-2');
    mock.timers.tick(61_000);
    assert.deepEqual(await conn.authHeaders(), { Authorization: 'Bearer token-2' });
  });
});
