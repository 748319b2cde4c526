import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HUB_ANNOTATIONS } from '../api/keys.ts';
import type { Secret } from '../api/resources.ts';
import type { KubeObject } from '../api/types.ts';
import { secretHash, secretUpload } from './secrets.ts';

const owner: KubeObject = { apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'db', uid: 'local-uid' } };
const hubOwner: KubeObject = { apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'db-eu1', uid: 'hub-uid' } };

const localSecret = (o: { data?: Record<string, string>; controller?: string; hash?: string; name?: string; type?: string } = {}): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: o.type ?? 'Opaque',
  metadata: {
    name: o.name ?? 'db-credentials',
    namespace: 'team',
    labels: { app: 'db' },
    annotations: { note: 'n', ...(o.hash ? { [HUB_ANNOTATIONS.uploadedHash]: o.hash } : {}) },
    ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Database', name: 'db', uid: o.controller ?? 'local-uid', controller: true }],
  },
  data: o.data ?? { password: 'cGFzcw==' },
});
const remote: Secret = { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 'db-credentials-eu1', namespace: 'team-eu1', resourceVersion: '9', labels: { hub: 'x' }, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'k' }] }, data: {} };
const upload = (local: Secret, r: Secret | undefined = remote) => secretUpload(local, { owner, hubOwner, remote: r, listed: ['db-credentials'], remoteName: 'db-credentials-eu1' });

describe('Secrets a spoke sends to the hub', () => {
  it("updates the hub's own Secret with the data, labels and annotations, under the hub object's control", () => {
    const u = upload(localSecret());
    assert.ok('remote' in u);
    assert.deepEqual(u.remote.data, { password: 'cGFzcw==' });
    assert.deepEqual(u.remote.metadata.labels, { hub: 'x', app: 'db' });
    assert.deepEqual(u.remote.metadata.annotations, { note: 'n' });
    assert.equal(u.remote.metadata.resourceVersion, '9', 'an update of the version read, never a blind write');
    assert.deepEqual(u.remote.metadata.ownerReferences?.map((r) => [r.uid, r.controller ?? false]), [['k', false], ['hub-uid', true]]);
    assert.equal(u.hash, secretHash(localSecret()));
    assert.deepEqual(remote.metadata.ownerReferences?.length, 1, 'the Secret read is not changed');
  });

  it('skips what is not listed, not controlled by the spoke object, has nowhere to go, is of another type, or is unchanged', () => {
    const why = (u: ReturnType<typeof upload>) => ('skip' in u ? u.skip : 'uploaded');
    assert.match(why(upload(localSecret({ name: 'other' }))), /not listed/);
    assert.match(why(upload(localSecret({ controller: 'someone-else' }))), /not controlled by db/);
    assert.match(why(secretUpload(localSecret(), { owner, hubOwner, remote: undefined, listed: ['db-credentials'], remoteName: 'db-credentials-eu1' })), /the hub has no Secret db-credentials-eu1/);
    assert.match(why(upload(localSecret({ type: 'kubernetes.io/tls' }))), /of type Opaque, db-credentials of kubernetes\.io\/tls/);
    assert.match(why(upload(localSecret({ hash: secretHash(localSecret()) }))), /unchanged/);
    assert.equal(why(upload(localSecret({ hash: secretHash(localSecret()), data: { password: 'bmV3' } }))), 'uploaded');
  });

  it('hashes content, not its key order nor the recorded hash', () => {
    const a = localSecret({ data: { a: 'MQ==', b: 'Mg==' } });
    const b = localSecret({ data: { b: 'Mg==', a: 'MQ==' }, hash: 'previous' });
    assert.equal(secretHash(a), secretHash(b));
    assert.notEqual(secretHash(a), secretHash({ ...a, metadata: { ...a.metadata, labels: { app: 'other' } } }));
    assert.notEqual(secretHash(a), secretHash({ ...a, type: 'kubernetes.io/tls' }));
  });
});
