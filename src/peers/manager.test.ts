// The peer manager against scripted peers (TLS servers that answer the kube-system probe with a
// UID of our choosing): connections verified before they are announced, replaced make-before-break
// when their inputs change, a wrong identity never opened, and nothing waits on the network.
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { silentLogger } from '../kube/index.ts';
import { generateCertificates, type CertificatePair } from '../kube/certificates.ts';
import type { PeerConnection, PeerInputs } from './connection.ts';
import { PeerConfigError } from './connection.ts';
import { PeerManager } from './manager.ts';

interface ScriptedPeer {
  readonly port: number;
  uid: string;
  /** Requests seen, by Authorization header. */
  readonly tokens: string[];
  close(): void;
}

async function scriptedPeer(pair: CertificatePair, uid: string): Promise<ScriptedPeer> {
  const tokens: string[] = [];
  const peer = { uid, tokens };
  const server = https.createServer({ cert: pair.tlsCert, key: pair.tlsKey }, (req, res) => {
    tokens.push(req.headers.authorization ?? '');
    if (req.url?.startsWith('/api/v1/namespaces/kube-system')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system', uid: peer.uid } }));
    } else {
      // Informers of an opened connection list things; an empty list is enough here.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [] }));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(peer, {
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  });
}

function kubeconfig(port: number, caCert: string, token: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'p', cluster: { server: `https://127.0.0.1:${port}`, 'certificate-authority-data': Buffer.from(caCert).toString('base64') } }],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'p', context: { cluster: 'p', user: 'u' } }],
    'current-context': 'p',
  });
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

// kube-system UIDs: the probe takes only UUIDs.
const UID_A = '0b5e6c1a-3f2d-4c8e-9a71-5d2f8e4b6c01';
const UID_B = '0b5e6c1a-3f2d-4c8e-9a71-5d2f8e4b6c02';
const UID_C = '0b5e6c1a-3f2d-4c8e-9a71-5d2f8e4b6c03';
const UID_REAL = '0b5e6c1a-3f2d-4c8e-9a71-5d2f8e4b6c04';
const UID_CLAIMED = '0b5e6c1a-3f2d-4c8e-9a71-5d2f8e4b6c05';

describe('PeerManager', () => {
  let pair: CertificatePair;
  const servers: ScriptedPeer[] = [];
  before(async () => {
    pair = await generateCertificates({ dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  });
  after(() => {
    for (const s of servers) s.close();
  });
  const peerAt = async (uid: string): Promise<ScriptedPeer> => {
    const s = await scriptedPeer(pair, uid);
    servers.push(s);
    return s;
  };
  const inputs = (s: ScriptedPeer, token: string, expectedID = s.uid): PeerInputs => ({ name: 'peer', expectedID, secretID: 'ns/peer', kubeconfig: kubeconfig(s.port, pair.caCert, token), endpoint: undefined });

  it('returns at once, announces a connection once its identity is verified, and keeps it for the same inputs', async () => {
    const s = await peerAt(UID_A);
    const m = new PeerManager({ healthIntervalMs: 60_000, cacheLimits: { perPeer: { maxObjects: 100, maxBytes: 2 ** 20 }, allPeers: { maxObjects: 200, maxBytes: 2 ** 21 } }, namespace: 'cluster-registry', log: silentLogger });
    const opened: PeerConnection[] = [];
    const changed: string[] = [];
    m.subscribe({ opened: (c) => opened.push(c), changed: (c) => changed.push(c.health.state) });
    const conn = m.ensure(inputs(s, 'token-1'));
    assert.equal(conn.health.state, 'connecting', 'nothing was awaited');
    await until(() => opened.length === 1);
    assert.equal(opened[0], conn);
    assert.deepEqual(m.aliveIDs(), new Set([UID_A]));
    assert.equal(m.ensure(inputs(s, 'token-1')), conn, 'same inputs, same connection');
    assert.deepEqual(changed, ['alive']);
    m.stopAll();
  });

  it('replaces a connection make-before-break: the old one serves until the new one has probed', async () => {
    const s = await peerAt(UID_B);
    const m = new PeerManager({ healthIntervalMs: 60_000, cacheLimits: { perPeer: { maxObjects: 100, maxBytes: 2 ** 20 }, allPeers: { maxObjects: 200, maxBytes: 2 ** 21 } }, namespace: 'cluster-registry', log: silentLogger });
    const events: string[] = [];
    m.subscribe({ opened: (c) => events.push(`opened ${tokenOf(c)}`), closed: (c) => events.push(`closed ${tokenOf(c)}`) });
    const old = m.ensure(inputs(s, 'old-token'));
    await until(() => old.verified);
    const fresh = m.ensure(inputs(s, 'new-token'));
    assert.notEqual(fresh, old);
    assert.equal(m.get('peer'), old, 'the old connection stays current while the new one probes');
    assert.equal(m.ensure(inputs(s, 'new-token')), fresh, 'asking again returns the one being built');
    await until(() => m.get('peer') === fresh);
    assert.deepEqual(events, ['opened old-token', 'closed old-token', 'opened new-token']);
    await until(() => s.tokens.includes('Bearer new-token'));
    m.stopAll();
    assert.deepEqual(events.at(-1), 'closed new-token');
  });

  it('never opens a peer that is not the cluster its Cluster names', async () => {
    const s = await peerAt(UID_REAL);
    const m = new PeerManager({ healthIntervalMs: 60_000, cacheLimits: { perPeer: { maxObjects: 100, maxBytes: 2 ** 20 }, allPeers: { maxObjects: 200, maxBytes: 2 ** 21 } }, namespace: 'cluster-registry', log: silentLogger });
    let opened = 0;
    m.subscribe({ opened: () => opened++ });
    const conn = m.ensure(inputs(s, 't', UID_CLAIMED));
    await until(() => conn.health.state === 'mismatch');
    assert.equal(opened, 0);
    assert.equal(conn.openedClients, undefined, 'no informers run against it');
    assert.deepEqual(m.aliveIDs(), new Set());
    m.stopAll();
  });

  it('refuses unusable credentials synchronously and leaves the current connection to the caller', async () => {
    const s = await peerAt(UID_C);
    const m = new PeerManager({ healthIntervalMs: 60_000, cacheLimits: { perPeer: { maxObjects: 100, maxBytes: 2 ** 20 }, allPeers: { maxObjects: 200, maxBytes: 2 ** 21 } }, namespace: 'cluster-registry', log: silentLogger });
    const conn = m.ensure(inputs(s, 't'));
    await until(() => conn.verified);
    const bad = { ...inputs(s, 't'), kubeconfig: inputs(s, 't').kubeconfig.replace('token: t', 'tokenFile: /etc/passwd') };
    assert.throws(() => m.ensure(bad), PeerConfigError);
    assert.equal(m.get('peer'), conn);
    m.remove('peer');
    assert.equal(m.get('peer'), undefined);
    m.stopAll();
  });
});

function tokenOf(c: PeerConnection): string {
  return /token: (\S+)/.exec(c.inputs.kubeconfig)?.[1] ?? '';
}
