// The resuming watch's policy, against a scripted client (no API server: what each watch returns
// is the script): where it goes on from, which ends it rides out, and which end it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SECRETS } from '../../src/core/api/resources.ts';
import { ApiError, type KubeObject, type RestClient, type WatchEvent, type WatchOptions, type WatchStream } from '../../src/kube/index.ts';
import { resumingWatch, type ResumingWatch, type ResumingWatchOptions } from './resuming-watch.ts';

/** One watch's part in the script: its events (then a quiet end), a failure to open, or one that stays open. */
type Turn = WatchEvent[] | Error | 'open';

const obj = (name: string, resourceVersion: string): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, resourceVersion } });
const gone = { apiVersion: 'v1', kind: 'Status', metadata: {}, code: 410, reason: 'Expired', message: 'too old resource version' } as unknown as KubeObject;

/** A client whose watches play `turns` in order, and that records the version each was opened from. */
function scripted(turns: Turn[]): { rest: RestClient; openedFrom: (string | undefined)[]; opens: { at: number; opts: WatchOptions }[] } {
  const openedFrom: (string | undefined)[] = [];
  const opens: { at: number; opts: WatchOptions }[] = [];
  const watch = (_ref: unknown, opts: WatchOptions): Promise<WatchStream> => {
    openedFrom.push(opts.resourceVersion);
    opens.push({ at: performance.now(), opts });
    const turn = turns.shift() ?? 'open';
    if (turn instanceof Error) return Promise.reject(turn);
    const ended = new Promise<void>((resolve) => (turn === 'open' ? opts.signal?.addEventListener('abort', () => resolve()) : resolve()));
    const events = turn === 'open' ? [] : turn;
    async function* play(): AsyncGenerator<WatchEvent> {
      yield* events;
      await ended;
    }
    return Promise.resolve({ [Symbol.asyncIterator]: play, batches: () => ({ [Symbol.asyncIterator]: async function* () {} }), close: () => undefined } as unknown as WatchStream);
  };
  return { rest: { watch } as unknown as RestClient, openedFrom, opens };
}

async function run(turns: Turn[], opts: Partial<ResumingWatchOptions> = {}, onEvent: (type: string, o: KubeObject) => void = () => undefined) {
  const { rest, openedFrom, opens } = scripted(turns);
  const seen: string[] = [];
  const w = await resumingWatch(rest, SECRETS, { resourceVersion: '1', ...opts }, (type, o) => {
    seen.push(`${type} ${o.metadata.name ?? ''}`);
    onEvent(type, o);
  });
  return { w, seen, openedFrom, opens };
}

/** Waits until `done` holds, failing after a few seconds rather than spinning on a broken watch. */
async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = performance.now() + 5_000;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`never saw ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/** Waits until the script has been played up to its last watch, which stays open, or the watch ended. */
async function played(openedFrom: readonly unknown[], watches: number, w: ResumingWatch): Promise<void> {
  let ended = false;
  void w.ended.then(() => (ended = true));
  await until(`${watches} watches opened`, () => openedFrom.length >= watches || ended);
}

// A test that would wait forever on a broken watch fails instead.
describe('resumingWatch', { timeout: 10_000 }, () => {
  it('goes on from the last version it saw (a bookmark included) when a watch ends quietly, and passes no bookmark on', async () => {
    const { w, seen, openedFrom } = await run([[{ type: 'ADDED', object: obj('a', '5') }, { type: 'BOOKMARK', object: obj('', '7') }], [{ type: 'MODIFIED', object: obj('a', '9') }], 'open']);
    await played(openedFrom, 3, w);
    w.close();
    assert.equal(await w.ended, undefined);
    assert.deepEqual(openedFrom, ['1', '7', '9']);
    assert.deepEqual(seen, ['ADDED a', 'MODIFIED a']);
  });

  it('ends with the error at a 410 when it may not list again, since what it missed cannot be told', async () => {
    const { w, openedFrom } = await run([[{ type: 'ERROR', object: gone }]]);
    assert.match(String(await w.ended), /410/);
    assert.deepEqual(openedFrom, ['1']);
  });

  it('lists again at a 410, event or error, and goes on from the version the listing returned', async () => {
    let relists = 0;
    const relist = () => Promise.resolve(String(100 * ++relists));
    const { w, openedFrom } = await run([[{ type: 'ERROR', object: gone }], new ApiError({ code: 410, reason: 'Expired', message: 'too old', method: 'GET', path: '/api/v1/secrets' }), 'open'], { relist });
    await played(openedFrom, 3, w);
    w.close();
    assert.equal(await w.ended, undefined);
    assert.deepEqual(openedFrom, ['1', '100', '200']);
  });

  it('opens again after a failure when told to ride failures out, and ends with it otherwise', async () => {
    const down = new Error('connect ECONNREFUSED');
    const riding = await run([[{ type: 'ADDED', object: obj('a', '4') }], down, 'open'], { retryMs: 1 });
    await played(riding.openedFrom, 3, riding.w);
    riding.w.close();
    assert.equal(await riding.w.ended, undefined);
    assert.deepEqual(riding.openedFrom, ['1', '4', '4']);

    const failing = await run([[{ type: 'ADDED', object: obj('a', '4') }], down]);
    assert.equal(await failing.w.ended, down);
  });

  it('ends with an ERROR event other than a 410 unless told to ride failures out', async () => {
    const status = { kind: 'Status', code: 500, message: 'internal error' } as unknown as KubeObject;
    assert.match(String(await (await run([[{ type: 'ERROR', object: status }]])).w.ended), /internal error/);
    const riding = await run([[{ type: 'ERROR', object: status }], 'open'], { retryMs: 1 });
    await played(riding.openedFrom, 2, riding.w);
    riding.w.close();
    assert.equal(await riding.w.ended, undefined);
  });

  it('ends quietly when closed while it lists again, whatever the cut-short listing throws', async () => {
    let listing: (err: Error) => void = () => undefined;
    let asked: AbortSignal | undefined;
    const relist = (signal: AbortSignal) => new Promise<string>((_, reject) => ((asked = signal), (listing = reject)));
    const { w } = await run([[{ type: 'ERROR', object: gone }]], { relist });
    await until('the relist', () => asked !== undefined);
    assert.equal(asked?.aborted, false);
    w.close();
    assert.equal(asked?.aborted, true, 'the listing is told the watch was closed');
    listing(new Error('This operation was aborted'));
    assert.equal(await w.ended, undefined);
  });

  it('opens every watch with what it was asked to watch', async () => {
    const asked = { namespace: 'ns', labelSelector: 'a=b', fieldSelector: 'metadata.name=x', timeoutSeconds: 60 };
    const { w, opens } = await run([[{ type: 'ADDED', object: obj('x', '2') }], 'open'], asked);
    await played(opens, 2, w);
    w.close();
    for (const { opts } of opens) assert.deepEqual({ namespace: opts.namespace, labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, timeoutSeconds: opts.timeoutSeconds, allowWatchBookmarks: opts.allowWatchBookmarks }, { ...asked, allowWatchBookmarks: true });
  });

  it('opens a watch that ended at once with nothing in it again only after a pause', async () => {
    const { w, opens } = await run([[], 'open']);
    await played(opens, 2, w);
    w.close();
    assert.equal(opens.length, 2);
    // The first pause is 200 ms and more (jittered).
    assert.ok(opens[1]!.at - opens[0]!.at >= 190, `opened again after ${(opens[1]!.at - opens[0]!.at).toFixed(0)} ms`);
  });

  it('ends with a 410 the open itself answers when it may not list again', async () => {
    const expired = new ApiError({ code: 410, reason: 'Expired', message: 'too old', method: 'GET', path: '/api/v1/secrets' });
    const { w } = await run([[{ type: 'ADDED', object: obj('a', '3') }], expired]);
    assert.equal(await w.ended, expired);
  });

  it('ends with a failure other than a 410 when it may list again but not ride failures out', async () => {
    const down = new Error('connect ECONNREFUSED');
    const { w } = await run([[{ type: 'ADDED', object: obj('a', '3') }], down], { relist: () => Promise.resolve('9') });
    assert.equal(await w.ended, down);
  });

  it("ends with what the caller's onEvent threw, even when told to ride failures out", async () => {
    const broken = new Error('the caller broke');
    const { w, openedFrom } = await run([[{ type: 'ADDED', object: obj('a', '3') }], 'open'], { retryMs: 1 }, () => {
      throw broken;
    });
    assert.equal(await w.ended, broken);
    assert.deepEqual(openedFrom, ['1']);
  });

  it('throws a failure to open the first watch at its caller', async () => {
    await assert.rejects(run([new Error('forbidden')]), /forbidden/);
  });
});
