import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostAllowed } from './server.ts';

describe('dashboard host check', () => {
  it('bound to loopback, answers only requests for a loopback name, whatever the port', () => {
    for (const bound of ['127.0.0.1', '::1', 'localhost']) {
      for (const host of ['localhost:8080', '127.0.0.1:8080', '127.0.0.2', '[::1]:8080', 'LOCALHOST']) assert.ok(hostAllowed(host, bound), `${host} on ${bound}`);
      // A name an attacker's DNS points at 127.0.0.1, or none at all.
      for (const host of ['evil.example:8080', 'localhost.evil.example', '127.0.0.1.evil.example', '', undefined]) assert.ok(!hostAllowed(host, bound), `${String(host)} on ${bound}`);
    }
  });

  it('bound elsewhere, the user chose to expose it: any host', () => {
    assert.ok(hostAllowed('dashboard.internal:8080', '0.0.0.0'));
    assert.ok(hostAllowed('10.0.0.5:8080', '10.0.0.5'));
  });
});
