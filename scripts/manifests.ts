// The plain manifests under deploy/ (the RBAC that kubectl users and the sandbox apply, and the
// reader widening for groups with upstream's members) are rendered from the Helm chart, so the two
// ways to install never drift apart. `make manifests` writes them; a test checks they are current.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT, toolPath } from '../src/sandbox/tools.ts';

export const CHART_DIR = join(PACKAGE_ROOT, 'deploy', 'charts', 'cluster-registry');
/** The release name and namespace that give the objects the names the sandbox and docs use. */
export const RELEASE = 'cluster-registry';
export const NAMESPACE = 'cluster-registry';

const HEADER = '# Generated from deploy/charts/cluster-registry by `make manifests`: edit the chart instead.\n';

/** Each plain manifest: where it goes, the chart template it comes from, and the values it needs. */
const MANIFESTS: readonly { path: string; template: string; set: readonly string[] }[] = [
  { path: 'deploy/manifests/rbac-controller.yaml', template: 'templates/rbac-controller.yaml', set: [] },
  { path: 'deploy/manifests/rbac-reader.yaml', template: 'templates/rbac-reader.yaml', set: [] },
  { path: 'deploy/manifests/hub-credentials.yaml', template: 'templates/hub-credentials.yaml', set: [] },
  { path: 'deploy/compat/reader-for-upstream-peers.yaml', template: 'templates/reader-upstream-peers.yaml', set: ['upstreamPeers.enabled=true'] },
];

/** `helm template` of a chart (ours unless given) as a release (the one above unless given) in the namespace above, with extra arguments. */
export async function helmTemplate(args: readonly string[] = [], o: { release?: string; chart?: string } = {}): Promise<string> {
  const { stdout } = await promisify(execFile)(toolPath('helm'), ['template', o.release ?? RELEASE, o.chart ?? CHART_DIR, '--namespace', NAMESPACE, ...args], { timeout: 60_000, maxBuffer: 16 << 20 });
  return stdout;
}

/** Every plain manifest's path (relative to the package root) and the text the chart renders for it. */
export async function renderedManifests(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const m of MANIFESTS) {
    const text = await helmTemplate(['--show-only', m.template, ...m.set.flatMap((s) => ['--set', s])]);
    // helm opens each document with a separator and the template's path.
    out.set(m.path, HEADER + text.replace(/^---\n# Source: .*\n/, '').replace(/\n---\n# Source: .*\n/g, '\n---\n'));
  }
  return out;
}

if (import.meta.main) {
  for (const [path, text] of await renderedManifests()) {
    writeFileSync(join(PACKAGE_ROOT, path), text);
    console.log(`wrote ${path}`);
  }
}
