// `cluster-registry rule render`: preview what a ResourceSyncRule does to one object, offline.
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { parseAllDocuments, stringify } from 'yaml';
import { KINDS } from '../core/api/keys.ts';
import type { Cluster, KubeObject, ResourceSyncRule } from '../core/api/types.ts';
import { renderRule } from '../core/rules/index.ts';

/** One object from a YAML file; YAML 1.1 as Go's sigs.k8s.io/yaml reads it (yes/no/on/off are booleans). */
export function readObject<T extends KubeObject>(path: string, what: string, kind?: string): T {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${what} file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const docs = parseAllDocuments(text, { version: '1.1' });
  if (!Array.isArray(docs) || docs.length !== 1) throw new Error(`${path}: expected exactly one YAML document for the ${what}`);
  const doc = docs[0];
  if (!doc || doc.errors.length > 0) throw new Error(`${path}: invalid YAML: ${doc?.errors[0]?.message ?? 'empty'}`);
  const obj = doc.toJS() as T | null;
  if (!obj || typeof obj !== 'object') throw new Error(`${path}: the ${what} is not an object`);
  if (kind && obj.kind !== kind) throw new Error(`${path}: expected kind ${kind} for the ${what}, got ${String(obj.kind)}`);
  obj.metadata ??= {};
  return obj;
}

/** Without --local-cluster the templates still get a LocalCluster: a placeholder that says so. */
const PLACEHOLDER_LOCAL: Cluster = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: KINDS.cluster, metadata: { name: 'local' }, spec: { clusterID: 'local-cluster-id' } };

export function ruleCommand(): Command {
  const cmd = new Command('rule').description('work with ResourceSyncRules offline');
  cmd
    .command('render')
    .description('show whether an object matches a rule and the copy the sync controller would write')
    .requiredOption('--rule <file>', 'the ResourceSyncRule (YAML)')
    .requiredOption('--object <file>', 'the source object as read from the peer (YAML)')
    .requiredOption('--cluster <file>', 'the Cluster of the peer the object comes from (YAML)')
    .option('--local-cluster <file>', 'the local Cluster (YAML); a placeholder when omitted')
    .action((o: { rule: string; object: string; cluster: string; localCluster?: string }) => {
      const rule = readObject<ResourceSyncRule>(o.rule, 'rule', KINDS.resourceSyncRule);
      const object = readObject(o.object, 'object');
      const cluster = readObject<Cluster>(o.cluster, 'cluster', KINDS.cluster);
      const localCluster = o.localCluster ? readObject<Cluster>(o.localCluster, 'local cluster', KINDS.cluster) : PLACEHOLDER_LOCAL;
      const result = renderRule({ rule, object, cluster, localCluster });
      if (result.errors.length > 0) {
        process.stderr.write(stringify({ errors: result.errors }));
        process.exitCode = 1;
        return;
      }
      const rules = rule.spec.rules ?? [];
      process.stdout.write(
        // YAML 1.1 quoting, so Go readers (kubectl) keep strings such as "yes" strings.
        stringify(
          {
            matched: result.matched,
            matchedRules: result.matchedRules.map((r) => rules.indexOf(r)),
            ...(result.copy ? { copy: result.copy } : {}),
          },
          { version: '1.1' },
        ),
      );
    });
  return cmd;
}
