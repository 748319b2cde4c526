// The Dockerfile, read (test/node/ builds the image from it and runs it as a Pod): an official
// Node 24 base in every stage, a multi-stage build whose final stage carries only production
// dependencies and the compiled CLI, a numeric non-root user, an exec-form entry point, and a
// build context limited to what it copies; jemalloc preloaded as the sandbox preloads it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../src/sandbox/index.ts';
import { JEMALLOC_CONF } from '../../src/testbed/group.ts';

interface Instruction {
  op: string;
  args: string;
}

/** The instructions of each stage (comments and continuation lines folded). */
function stages(text: string): Instruction[][] {
  const out: Instruction[][] = [];
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  for (const line of lines) {
    const [op = '', ...rest] = line.split(/\s+/);
    const ins = { op: op.toUpperCase(), args: rest.join(' ') };
    if (ins.op === 'FROM') out.push([]);
    out[out.length - 1]?.push(ins);
  }
  return out;
}

const dockerfile = readFileSync(join(PACKAGE_ROOT, 'Dockerfile'), 'utf8');
const all = stages(dockerfile);
const final = all.at(-1) ?? [];
const nodeMajor = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies['node']?.replace(/^\D*/, '').split('.')[0];

describe('Dockerfile', () => {
  it('builds in stages on the official Node base of the pinned major version', () => {
    assert.ok(all.length >= 2, 'multi-stage');
    for (const s of all) assert.match(s[0]?.args ?? '', new RegExp(`^node:${nodeMajor}-[a-z0-9-]+(@sha256:[0-9a-f]{64})?( AS \\w+)?$`, 'i'));
  });

  it('installs only production dependencies for the final image, and copies nothing else but the compiled CLI, its shim and package.json', () => {
    const installs = all.flatMap((s) => s.filter((i) => i.op === 'RUN' && /npm ci/.test(i.args)));
    assert.ok(installs.some((i) => /--omit=dev/.test(i.args) && /--ignore-scripts/.test(i.args)), 'a production install without install scripts');
    const copies = final.filter((i) => i.op === 'COPY' || i.op === 'ADD');
    assert.ok(copies.every((i) => i.op === 'COPY'), 'no ADD (no remote URLs or archives)');
    const sources = copies.map((i) => i.args.replace(/^--from=\S+\s+/, '').split(/\s+/)[0]);
    assert.deepEqual(sources.sort(), ['/app/node_modules', '/src/dist', 'bin', 'package.json']);
    assert.ok(copies.some((i) => /^--from=dependencies\s+\/app\/node_modules/.test(i.args)), 'node_modules from the production install');
  });

  it('runs as a numeric non-root user, with an exec-form entry point into the controller', () => {
    const user = final.filter((i) => i.op === 'USER').at(-1)?.args ?? '';
    assert.match(user, /^[1-9]\d*(:[1-9]\d*)?$/, 'numeric, so runAsNonRoot can be verified by the kubelet');
    const entry = JSON.parse(final.find((i) => i.op === 'ENTRYPOINT')?.args ?? 'null') as string[] | null;
    assert.ok(Array.isArray(entry) && entry[0] === 'node' && entry.at(-1) === '/app/bin/cluster-registry.js', 'exec form, node running the shim');
    assert.deepEqual(JSON.parse(final.find((i) => i.op === 'CMD')?.args ?? 'null'), ['controller']);
    // Node's flags come from the environment, which the chart's extraEnv can override; on the
    // command line they would win over NODE_OPTIONS.
    assert.deepEqual(entry, ['node', '/app/bin/cluster-registry.js']);
    assert.match(final.find((i) => i.op === 'ENV' && /^NODE_OPTIONS=/.test(i.args))?.args ?? '', /^NODE_OPTIONS="--max-semi-space-size=\d+ --max-old-space-size-percentage=\d+"$/);
  });

  it("preloads jemalloc with the settings the sandbox runs the controller with, so that the benchmarks' figures are the image's", () => {
    // The value the process gets is the last one the final stage assigns.
    const env = new Map<string, string>();
    for (const i of final.filter((i) => i.op === 'ENV')) {
      assert.match(i.args, /^\w+=/, `ENV ${i.args}: the name=value form`);
      // An empty value counts: it is how the preload is turned off.
      for (const [, name, value] of i.args.matchAll(/(?:^|\s)(\w+)=("[^"]*"|\S*)/g)) env.set(name!, value!.replace(/^"(.*)"$/, '$1'));
    }
    assert.equal(env.get('LD_PRELOAD'), '/usr/local/lib/libjemalloc.so.2');
    assert.equal(env.get('MALLOC_CONF'), JEMALLOC_CONF);
    const run = final.filter((i) => i.op === 'RUN').map((i) => i.args).join(' ');
    assert.match(run, /apt-get install -y --no-install-recommends libjemalloc2 /);
    assert.match(run, /ln -s .*\/usr\/local\/lib\/libjemalloc\.so\.2$/);
  });

  it('sends the build only what it copies', () => {
    const ignore = readFileSync(join(PACKAGE_ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    assert.equal(ignore[0], '*', 'everything excluded first');
    for (const path of ['package.json', 'package-lock.json', 'src/', 'bin/']) assert.ok(ignore.includes(`!${path}`), `${path} let in`);
    assert.ok(!ignore.some((l) => /^!(\.cache|node_modules|dist|\.git)/.test(l)), 'no caches, builds or history');
  });
});
