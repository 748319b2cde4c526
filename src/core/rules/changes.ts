// Which watch updates can change a copy. Upstream compared old and new through a three-way diff
// whose base was an annotation sources rarely carry, so a change that only removed something (a
// label, a data key) went unnoticed. Here old and new are compared directly, less
// what never reaches a copy: bookkeeping the server changes on every write, and status unless
// the rule syncs it.

import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../api/types.ts';

function comparable(obj: KubeObject, withStatus: boolean): unknown {
  const { resourceVersion: _rv, managedFields: _mf, generation: _g, ...metadata } = obj.metadata ?? {};
  const { metadata: _m, status, ...rest } = obj;
  return withStatus ? { ...rest, metadata, status } : { ...rest, metadata };
}

export function copyRelevantChange(oldObj: KubeObject, newObj: KubeObject, withStatus: boolean): boolean {
  return !isDeepStrictEqual(comparable(oldObj, withStatus), comparable(newObj, withStatus));
}
