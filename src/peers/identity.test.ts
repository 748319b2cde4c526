import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RestClient } from '../kube/index.ts';
import { kubeSystemUID } from './identity.ts';

const answering = (uid: unknown): RestClient => ({ server: new URL('https://10.0.0.1:6443'), get: async () => ({ metadata: { name: 'kube-system', uid } }) }) as unknown as RestClient;

describe('kubeSystemUID', () => {
  it('takes a UUID in either case', async () => {
    assert.equal(await kubeSystemUID(answering('0b5e6c1a-3f2d-4c8e-9a71-5d2f8e4b6c01')), '0b5e6c1a-3f2d-4c8e-9a71-5d2f8e4b6c01');
    assert.equal(await kubeSystemUID(answering('0B5E6C1A-3F2D-4C8E-9A71-5D2F8E4B6C01')), '0B5E6C1A-3F2D-4C8E-9A71-5D2F8E4B6C01');
  });

  it('refuses anything else without quoting it', async () => {
    const hostile = [
      'uid-a',
      'SECRET-0b5e6c1a-3f2d-4c8e-9a71-5d2f8e4b6c01',
      '0b5e6c1a-3f2d-4c8e-9a71-5d2f8e4b6c01\nSECRET',
      '0b5e6c1a3f2d4c8e9a715d2f8e4b6c01',
      '{0b5e6c1a-3f2d-4c8e-9a71-5d2f8e4b6c01}',
      'SECRET'.repeat(100_000),
      ['SECRET'],
      { SECRET: 1 },
      42,
    ];
    for (const uid of hostile) {
      await assert.rejects(kubeSystemUID(answering(uid)), (err: Error) => {
        assert.equal(err.message, 'the kube-system namespace of 10.0.0.1:6443 has a uid that is not a UUID');
        return true;
      });
    }
    await assert.rejects(kubeSystemUID(answering(undefined)), /^PeerIdentityError: the kube-system namespace of 10\.0\.0\.1:6443 has no uid$/);
    await assert.rejects(kubeSystemUID(answering('')), /has no uid$/);
  });
});
