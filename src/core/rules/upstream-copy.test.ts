import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, LABELS } from '../api/keys.ts';
import type { KubeObject } from '../api/types.ts';
import { upstreamCopyInSync } from './upstream-copy.ts';

const OWNER = 'owner-uid';
/** What our sync would write: the owner's marks, our records, the data. */
const DESIRED: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'app',
    namespace: 'app',
    labels: { [LABELS.ownership]: OWNER, team: 'a' },
    annotations: { [ANNOTATIONS.ownership]: OWNER, [ANNOTATIONS.source]: '{"clusterID":"owner-uid"}', [ANNOTATIONS.syncRecord]: 'v1;hash;owner-uid;5;1' },
  },
  data: { k: 'v' },
};

/** A copy as upstream's controller writes it, written out by hand: the owner's marks and the data, none of our records. */
function upstreamCopy(o: { data?: Record<string, string>; labels?: Record<string, string>; annotations?: Record<string, string> } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'app',
      namespace: 'app',
      uid: 'copy-uid',
      resourceVersion: '9',
      labels: o.labels ?? { [LABELS.ownership]: OWNER, team: 'a' },
      annotations: o.annotations ?? { [ANNOTATIONS.ownership]: OWNER },
      managedFields: [{ manager: 'cluster-registry-controller', operation: 'Update', time: '2026-11-27T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: {} }],
    },
    data: o.data ?? { k: 'v' },
  };
}

describe('upstreamCopyInSync', () => {
  const cases: [string, KubeObject, boolean][] = [
    ['a copy holding what ours would write, without our records', upstreamCopy(), true],
    ['one with labels and annotations others added besides', upstreamCopy({ annotations: { [ANNOTATIONS.ownership]: OWNER, 'example.com/note': 'x' }, labels: { [LABELS.ownership]: OWNER, team: 'a', extra: 'y' } }), true],
    ['one written from an older source', upstreamCopy({ data: { k: 'old' } }), false],
    ['one without a label the rule sets', upstreamCopy({ labels: { [LABELS.ownership]: OWNER } }), false],
    ['one naming another owner', upstreamCopy({ annotations: { [ANNOTATIONS.ownership]: 'someone-else' } }), false],
    ['one still holding a key the source dropped (upstream drops it)', upstreamCopy({ data: { k: 'v', dropped: 'x' } }), false],
  ];
  for (const [what, current, want] of cases) it(`${what}: ${want ? 'in sync' : 'differs'}`, () => assert.equal(upstreamCopyInSync(current, DESIRED, 'whole', false), want));

  it('with status synced, a copy whose status differs: differs; without, status is not looked at', () => {
    const withStatus: KubeObject = { ...DESIRED, status: { phase: 'Ready' } };
    const copy = { ...upstreamCopy(), status: { phase: 'Pending' } };
    assert.equal(upstreamCopyInSync(copy, withStatus, 'main', true), false);
    assert.equal(upstreamCopyInSync(copy, withStatus, 'main', false), true);
    assert.equal(upstreamCopyInSync({ ...copy, status: { phase: 'Ready' } }, withStatus, 'main', true), true);
  });

  it('does not drop our records from what it is given', () => {
    upstreamCopyInSync(upstreamCopy(), DESIRED, 'whole', false);
    assert.ok(DESIRED.metadata.annotations?.[ANNOTATIONS.source]);
  });
});
