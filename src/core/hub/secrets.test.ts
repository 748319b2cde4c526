import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HUB_ANNOTATIONS } from '../api/keys.ts';
import type { Secret } from '../api/resources.ts';
import type { KubeObject } from '../api/types.ts';
import { secretHash, secretUpload } from './secrets.ts';

const owner: KubeObject = { apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'db', uid: 'local-uid' } };
const hubOwner: KubeObject = { apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'db-eu1', uid: 'hub-uid' } };

const localSecret = (o: { data?: Record<string, string>; controller?: string; name?: string; type?: string } = {}): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: o.type ?? 'Opaque',
  metadata: {
    name: o.name ?? 'db-credentials',
    namespace: 'team',
    labels: { app: 'db' },
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"password":"plain"}}' },
    ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Database', name: 'db', uid: o.controller ?? 'local-uid', controller: true }],
  },
  data: o.data ?? { password: 'cGFzcw==' },
});
const remoteSecret = (o: { data?: Record<string, string>; controller?: boolean } = {}): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'Opaque',
  metadata: { name: 'db-credentials-eu1', namespace: 'team-eu1', resourceVersion: '9', labels: { hub: 'x' }, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'k', ...(o.controller ? { controller: true } : {}) }] },
  data: o.data ?? {},
});
const upload = (local: Secret, remote: Secret | undefined = remoteSecret()) => secretUpload(local, { owner, hubOwner, remote, listed: ['db-credentials'], remoteName: 'db-credentials-eu1' });

describe('Secrets a spoke sends to the hub', () => {
  it("fills the hub's own Secret with the data and its hash only, under the hub object's control unless it has a controller", () => {
    const remote = remoteSecret();
    const u = upload(localSecret(), remote);
    assert.ok('remote' in u);
    assert.deepEqual(u.remote.data, { password: 'cGFzcw==' });
    assert.deepEqual(u.remote.metadata.labels, { hub: 'x' }, "the hub Secret's labels stay the hub's");
    assert.deepEqual(u.remote.metadata.annotations, { [HUB_ANNOTATIONS.uploadedHash]: secretHash(localSecret()) }, 'no local annotation (an apply record may hold the plain text) goes up');
    assert.equal(u.remote.metadata.resourceVersion, '9', 'an update of the version read, never a blind write');
    assert.deepEqual(u.remote.metadata.ownerReferences?.map((r) => [r.uid, r.controller ?? false]), [['k', false], ['hub-uid', true]]);
    assert.equal(remote.metadata.ownerReferences?.length, 1, 'the Secret read is not changed');
    const controlled = upload(localSecret(), remoteSecret({ controller: true }));
    assert.ok('remote' in controlled);
    assert.deepEqual(controlled.remote.metadata.ownerReferences?.map((r) => r.uid), ['k'], 'a controller the hub set stays');
  });

  it('skips what is not listed, not controlled by the spoke object, has nowhere to go, is of another type, or is there already', () => {
    const why = (u: ReturnType<typeof upload>) => ('skip' in u ? u.skip : 'uploaded');
    assert.match(why(upload(localSecret({ name: 'other' }))), /not listed/);
    assert.match(why(upload(localSecret({ controller: 'someone-else' }))), /not controlled by db/);
    assert.match(why(secretUpload(localSecret(), { owner, hubOwner, remote: undefined, listed: ['db-credentials'], remoteName: 'db-credentials-eu1' })), /the hub has no Secret db-credentials-eu1/);
    assert.match(why(upload(localSecret({ type: 'kubernetes.io/tls' }))), /of type Opaque, db-credentials of kubernetes\.io\/tls/);
    assert.match(why(upload(localSecret(), remoteSecret({ data: { password: 'cGFzcw==' } }))), /already holds/);
    assert.equal(why(upload(localSecret({ data: { password: 'bmV3' } }), remoteSecret({ data: { password: 'cGFzcw==' } }))), 'uploaded', 'the hub emptied or changed it: sent again');
  });

  it('hashes the data, not its key order', () => {
    assert.equal(secretHash(localSecret({ data: { a: 'MQ==', b: 'Mg==' } })), secretHash(localSecret({ data: { b: 'Mg==', a: 'MQ==' } })));
    assert.notEqual(secretHash(localSecret({ data: { a: 'MQ==' } })), secretHash(localSecret({ data: { a: 'Mg==' } })));
  });
});
