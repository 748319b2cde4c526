// `cluster-registry rule render` as a rule author runs it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';

const CLI = fileURLToPath(new URL('../../bin/cluster-registry.js', import.meta.url));
// The examples users read, plus broken inputs kept with the tests.
const fixture = (f: string) =>
  fileURLToPath(new URL(f.startsWith('bad-') ? `fixtures/${f}` : `../../examples/rule-render/${f}`, import.meta.url));
const exec = promisify(execFile);

async function render(rule: string, extra: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = [CLI, 'rule', 'render', '--rule', fixture(rule), '--object', fixture('service.yaml'), '--cluster', fixture('cluster.yaml'), ...extra];
  try {
    const { stdout, stderr } = await exec(process.execPath, args);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('cluster-registry rule render', () => {
  it('prints whether the object matches and the copy, with templates rendered as Go renders them', async () => {
    const r = await render('rule.yaml', ['--local-cluster', fixture('local-cluster.yaml')]);
    assert.equal(r.code, 0, r.stderr);
    const out = parse(r.stdout, { version: '1.1' }) as { matched: boolean; matchedRules: number[]; copy: { metadata: Record<string, unknown> } };
    assert.equal(out.matched, true);
    assert.deepEqual(out.matchedRules, [1]);
    const sha = createHash('sha256').update('demo-cluster-1').digest('hex').slice(0, 4);
    assert.equal(out.copy.metadata['name'], `test-service-demo-cluster-1-${sha}`);
    const labels = out.copy.metadata['labels'] as Record<string, unknown>;
    // A string, not YAML 1.1's boolean: the output is safe to feed to kubectl.
    assert.equal(labels['synced'], 'yes');
    assert.equal(labels['cluster-registry.k8s.cisco.com/original-name'], 'test-service');
    assert.equal((out.copy.metadata['annotations'] as Record<string, string>)['region'], 'home');
    for (const stripped of ['uid', 'resourceVersion']) assert.equal(out.copy.metadata[stripped], undefined);
  });

  it('reports a bad template with its location and exits non-zero', async () => {
    const r = await render('bad-template-rule.yaml');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /spec\.rules\[0\]\.mutations\.overrides\[0\]\.value: template: :1: function\s+"nosuchfunc" not defined/);
  });

  it('says clearly when a file is missing or of the wrong kind', async () => {
    const missing = await render('nope.yaml');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read rule file .*nope\.yaml: ENOENT/);
    const wrongKind = await render('cluster.yaml');
    assert.match(wrongKind.stderr, /expected kind ResourceSyncRule for the rule, got Cluster/);
  });
});
