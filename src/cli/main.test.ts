import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

test("the command line's modules leave Node's bundled undici unloaded (node:http imported as an ES module would load it, about 8 MiB)", () => {
  // What every controller process loads: main.ts and the modules it imports before any command runs.
  const onExit = 'data:text/javascript,process.on("exit", () => process.stdout.write("undici loaded: " + process.moduleLoadList.some((m) => m.includes("undici"))))';
  const out = execFileSync(process.execPath, ['--import', onExit, fileURLToPath(new URL('main.ts', import.meta.url)), '--version'], { encoding: 'utf8' });
  assert.match(out, /^cluster-registry version /);
  assert.match(out, /undici loaded: false$/);
});
