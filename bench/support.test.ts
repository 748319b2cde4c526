import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { availableParallelism } from 'node:os';
import { balancedOrders, cpusOf } from './support.ts';

describe('balancedOrders', () => {
  for (const n of [2, 4, 6, 8]) {
    it(`puts each of ${n} paths at each place once, and after each other path once`, () => {
      const orders = balancedOrders(n);
      assert.equal(orders.length, n);
      for (const order of orders) assert.deepEqual([...order].sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
      for (let place = 0; place < n; place++) assert.equal(new Set(orders.map((o) => o[place])).size, n);
      const pairs = new Set(orders.flatMap((o) => o.slice(1).map((x, i) => `${o[i]}>${x}`)));
      assert.equal(pairs.size, n * (n - 1));
    });
  }

  it('is the square the head-to-head took its four paths in', () => {
    assert.deepEqual(balancedOrders(4), [
      [0, 1, 3, 2],
      [1, 2, 0, 3],
      [2, 3, 1, 0],
      [3, 0, 2, 1],
    ]);
  });
});

describe('cpusOf', () => {
  it('lists the CPUs this process may run on, one by one', () => {
    const cpus = cpusOf(process.pid);
    assert.equal(cpus.length, availableParallelism());
    assert.deepEqual([...new Set(cpus)].sort((a, b) => a - b), cpus);
  });
});
