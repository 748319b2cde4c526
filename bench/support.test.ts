import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cpus } from 'node:os';
import { allowedCpus, balancedOrders, parseCpuList } from './support.ts';

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

  it('refuses an odd number of paths, which it could not balance', () => {
    assert.throws(() => balancedOrders(5), /even/);
  });

  it("is Williams' square for four paths", () => {
    assert.deepEqual(balancedOrders(4), [
      [0, 1, 3, 2],
      [1, 2, 0, 3],
      [2, 3, 1, 0],
      [3, 0, 2, 1],
    ]);
  });
});

describe('CPU lists', () => {
  it('reads ranges and single CPUs', () => {
    assert.deepEqual(parseCpuList('0-3,6\n'), [0, 1, 2, 3, 6]);
    assert.deepEqual(parseCpuList('1'), [1]);
    assert.deepEqual(parseCpuList(''), []);
  });

  it("lists the CPUs this process may run on, among the machine's", () => {
    const allowed = allowedCpus();
    assert.ok(allowed.length > 0);
    for (const cpu of allowed) assert.ok(cpu >= 0 && cpu < cpus().length, `CPU ${cpu}`);
  });
});
