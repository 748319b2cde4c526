import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

test("the controller's modules leave Node's bundled undici unloaded (node:http imported as an ES module would load it)", () => {
  const entry = new URL('../cli/controller.ts', import.meta.url).href;
  const loaded = execFileSync(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(entry)}); process.stdout.write(String(process.moduleLoadList.some((m) => m.includes('undici'))))`], { encoding: 'utf8' });
  assert.equal(loaded, 'false');
});
