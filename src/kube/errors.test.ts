import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ApiError, clip } from './errors.ts';

describe('clip', () => {
  it('keeps short text, cuts long text to at most max characters that count the rest', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3000 }), fc.integer({ min: 40, max: 2000 }), (text, max) => {
        const out = clip(text, max);
        if (text.length <= max) return assert.equal(out, text);
        assert.ok(out.length <= max, `${out.length} > ${max}`);
        const m = /… \((\d+) more characters\)$/.exec(out);
        assert.ok(m);
        const kept = out.slice(0, m.index);
        assert.ok(text.startsWith(kept));
        assert.equal(kept.length + Number(m[1]), text.length);
      }),
    );
  });

  it('drops what is not a string', () => {
    for (const v of [undefined, null, 42, ['x'.repeat(5000)], { length: 1e9 }]) assert.equal(clip(v, 64), undefined);
  });
});

describe('ApiError.fromStatus', () => {
  it('takes only well-typed fields of a Status', () => {
    const status = JSON.parse('{"kind":"Status","code":"410","reason":{"x":1},"message":["a"]}');
    const err = ApiError.fromStatus(status, 500, 'WATCH', 'configmaps');
    assert.equal(err.code, 500);
    assert.equal(err.reason, 'InternalError');
    assert.equal(err.message, 'WATCH configmaps: 500 InternalError');
    assert.equal(ApiError.fromStatus({ code: 410, reason: 'Expired' }, 500, 'GET', '/x').code, 410);
  });

  it('takes a retry delay from details only when it is a sane number of seconds', () => {
    const delay = (details: unknown) => ApiError.fromStatus(JSON.parse(JSON.stringify({ code: 429, details })) as never, 500, 'GET', '/x').retryAfterSeconds;
    assert.equal(delay({ retryAfterSeconds: 3 }), 3);
    for (const bad of [{ retryAfterSeconds: '3' }, { retryAfterSeconds: -1 }, { retryAfterSeconds: null }, [], 'x', null]) assert.equal(delay(bad), undefined, JSON.stringify(bad));
  });

  it('keeps only well-typed, clipped details', () => {
    const d = ApiError.fromStatus(
      JSON.parse(JSON.stringify({ code: 422, details: { name: 'n'.repeat(10_000), kind: 7, extra: 'x', causes: [...Array.from({ length: 100 }, () => ({ message: 'm'.repeat(5000), field: 'f', other: 1 })), 'not a cause'] } })) as never,
      500,
      'GET',
      '/x',
    ).details;
    assert.ok(d);
    assert.ok(d.name && d.name.length <= 253 && d.name.endsWith('more characters)'), d.name);
    assert.equal(d.kind, undefined);
    assert.equal((d as Record<string, unknown>)['extra'], undefined);
    assert.equal(d.causes?.length, 16);
    assert.deepEqual(Object.keys(d.causes?.[0] ?? {}), ['message', 'field']);
    const m = d.causes?.[0]?.message ?? '';
    assert.ok(m.length <= 1024 && m.length > 1000, String(m.length));
  });
});
