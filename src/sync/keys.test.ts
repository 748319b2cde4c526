import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { objectName, placeKey, SYNC_KEY_CODEC, syncKey } from './keys.ts';

describe('sync keys', () => {
  it('name a cluster-scoped object with an empty namespace', () => {
    assert.deepEqual(syncKey('r', 'p', undefined, 'n'), ['r', 'p', '', 'n']);
  });

  it('travel through the queue unchanged, equal keys as equal text', () => {
    const key = syncKey('r', 'p', 'ns', 'n');
    assert.deepEqual(SYNC_KEY_CODEC.decode(SYNC_KEY_CODEC.encode(key)), key);
    assert.equal(SYNC_KEY_CODEC.encode(key), SYNC_KEY_CODEC.encode(syncKey('r', 'p', 'ns', 'n')));
  });

  it('keep apart keys whose fields would run together as text', () => {
    assert.notEqual(SYNC_KEY_CODEC.encode(syncKey('r', 'p', 'a', 'b/c')), SYNC_KEY_CODEC.encode(syncKey('r', 'p', 'a/b', 'c')));
  });

  it('read as namespace/name, or name alone for a cluster-scoped object', () => {
    assert.equal(objectName(syncKey('r', 'p', 'ns', 'n')), 'ns/n');
    assert.equal(objectName(syncKey('r', 'p', undefined, 'n')), 'n');
  });
});

describe('placeKey', () => {
  it('is the same for every version of a kind at one place', () => {
    const v1 = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { namespace: 'ns', name: 'w' } };
    assert.equal(placeKey(v1), placeKey({ ...v1, apiVersion: 'example.com/v2' }));
    assert.equal(placeKey(v1), 'example.com/Widget|ns/w');
  });

  it('tells apart kinds of the same name in other groups', () => {
    const o = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { namespace: 'ns', name: 'w' } };
    assert.notEqual(placeKey(o), placeKey({ ...o, apiVersion: 'other.example.com/v1' }));
  });
});
