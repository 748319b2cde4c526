import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MalformedReviewError, clusterOf, decodeAdmissionReview, encodeAdmissionResponse, isClusterWrite } from './admission-review.ts';

function review(request: Record<string, unknown>): string {
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
}

const clusterRequest = {
  uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
  kind: { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', kind: 'Cluster' },
  resource: { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', resource: 'clusters' },
  name: 'east',
  operation: 'CREATE',
  userInfo: { username: 'admin' },
  object: { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name: 'east' }, spec: { clusterID: 'abc' } },
  oldObject: null,
  dryRun: false,
};

describe('AdmissionReview decoding', () => {
  it('decodes a v1 Cluster CREATE', () => {
    const req = decodeAdmissionReview(review(clusterRequest));
    assert.equal(req.uid, clusterRequest.uid);
    assert.equal(req.operation, 'CREATE');
    assert.equal(req.name, 'east');
    assert.deepEqual(req.kind, clusterRequest.kind);
    assert.ok(isClusterWrite(req));
    assert.deepEqual(clusterOf(req), clusterRequest.object);
  });

  it('judges only Cluster CREATE and UPDATE', () => {
    assert.ok(isClusterWrite(decodeAdmissionReview(review({ ...clusterRequest, operation: 'UPDATE' }))));
    assert.ok(!isClusterWrite(decodeAdmissionReview(review({ ...clusterRequest, operation: 'DELETE' }))));
    assert.ok(!isClusterWrite(decodeAdmissionReview(review({ ...clusterRequest, kind: { group: '', version: 'v1', kind: 'Secret' } }))));
    assert.ok(!isClusterWrite(decodeAdmissionReview(review({ ...clusterRequest, kind: { group: 'other.io', version: 'v1', kind: 'Cluster' } }))));
  });

  it('refuses what is not a v1 AdmissionReview request', () => {
    const cases: [string, RegExp][] = [
      ['{', /not JSON/],
      ['[]', /not a JSON object/],
      [JSON.stringify({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: clusterRequest }), /expected admission\.k8s\.io\/v1 AdmissionReview, got "admission\.k8s\.io\/v1beta1"/],
      [JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), /has no request/],
      [review({ ...clusterRequest, uid: '' }), /uid is missing/],
      [review({ ...clusterRequest, operation: 3 }), /operation is missing/],
      [review({ ...clusterRequest, kind: 'Cluster' }), /kind is missing/],
    ];
    for (const [body, message] of cases) assert.throws(() => decodeAdmissionReview(body), (err) => err instanceof MalformedReviewError && message.test(err.message), body);
  });

  it('refuses a Cluster write without an object', () => {
    for (const object of [undefined, null, 'x', { spec: {} }, { metadata: {}, spec: 'x' }]) {
      const req = decodeAdmissionReview(review({ ...clusterRequest, object }));
      assert.throws(() => clusterOf(req), MalformedReviewError);
    }
  });
});

describe('AdmissionReview encoding', () => {
  it('answers an allowed request with the uid and no status', () => {
    assert.deepEqual(encodeAdmissionResponse('u1', { allowed: true }), {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u1', allowed: true },
    });
  });

  it('answers a denied request with the code and message', () => {
    assert.deepEqual(encodeAdmissionResponse('u2', { allowed: false, code: 409, message: 'duplicate' }), {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u2', allowed: false, status: { code: 409, message: 'duplicate' } },
    });
  });
});
