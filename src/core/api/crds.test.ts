// The CRDs in the chart's crds/ against the API contract: upstream's names, scope and columns, and a
// schema every object the product writes fits into (unknown fields would be pruned silently).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { coreClusterFeature, coreResourceSyncRules } from './core-rules.ts';
import { API_GROUP, RULE_STATUS_LIMITS } from './keys.ts';
import type { Cluster, ResourceSyncRule } from './types.ts';

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema;
  items?: Schema;
  required?: string[];
  pattern?: string;
  maxItems?: number;
  maxLength?: number;
  'x-kubernetes-int-or-string'?: boolean;
}

interface CRD {
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; singular: string; listKind: string; shortNames?: string[] };
    versions: { name: string; served: boolean; storage: boolean; subresources?: unknown; additionalPrinterColumns?: { name: string; jsonPath: string; priority?: number }[]; schema: { openAPIV3Schema: Schema } }[];
  };
}

function load(plural: string): CRD {
  return parse(readFileSync(new URL(`../../../deploy/charts/cluster-registry/crds/${API_GROUP}_${plural}.yaml`, import.meta.url), 'utf8')) as CRD;
}

/** Problems of `value` against a structural schema: wrong types, missing required, unknown fields. */
function check(value: unknown, s: Schema, path: string): string[] {
  if (s['x-kubernetes-int-or-string']) return Number.isInteger(value) || typeof value === 'string' ? [] : [`${path}: not int-or-string`];
  switch (s.type) {
    case 'string':
      if (typeof value !== 'string') return [`${path}: not a string`];
      if (s.pattern && !new RegExp(s.pattern).test(value)) return [`${path}: does not match ${s.pattern}`];
      return s.maxLength !== undefined && value.length > s.maxLength ? [`${path}: too long`] : [];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${path}: not a boolean`];
    case 'integer':
      return Number.isInteger(value) ? [] : [`${path}: not an integer`];
    case 'array':
      if (!Array.isArray(value)) return [`${path}: not an array`];
      return value.flatMap((v, i) => check(v, s.items ?? {}, `${path}[${i}]`));
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: not an object`];
      const rec = value as Record<string, unknown>;
      const missing = (s.required ?? []).filter((k) => !(k in rec)).map((k) => `${path}.${k}: required`);
      return missing.concat(
        Object.entries(rec).flatMap(([k, v]) => {
          const sub = s.properties?.[k] ?? s.additionalProperties;
          if (sub) return check(v, sub, `${path}.${k}`);
          // metadata is `type: object` without properties: the apiserver validates it itself.
          return s.properties || s.additionalProperties ? [`${path}.${k}: unknown field (would be pruned)`] : [];
        }),
      );
    }
    default:
      return [];
  }
}

const clusters = load('clusters');
const features = load('clusterfeatures');
const rules = load('resourcesyncrules');

describe('CRDs', () => {
  it('names, scope, short names and version as upstream', () => {
    const got = [clusters, features, rules].map((c) => ({
      group: c.spec.group,
      scope: c.spec.scope,
      names: c.spec.names,
      versions: c.spec.versions.map((v) => [v.name, v.served, v.storage, v.subresources]),
    }));
    const version = [['v1alpha1', true, true, { status: {} }]];
    assert.deepEqual(got, [
      { group: API_GROUP, scope: 'Cluster', names: { kind: 'Cluster', listKind: 'ClusterList', plural: 'clusters', singular: 'cluster' }, versions: version },
      { group: API_GROUP, scope: 'Cluster', names: { kind: 'ClusterFeature', listKind: 'ClusterFeatureList', plural: 'clusterfeatures', shortNames: ['cf'], singular: 'clusterfeature' }, versions: version },
      { group: API_GROUP, scope: 'Cluster', names: { kind: 'ResourceSyncRule', listKind: 'ResourceSyncRuleList', plural: 'resourcesyncrules', shortNames: ['rsr'], singular: 'resourcesyncrule' }, versions: version },
    ]);
  });

  it('printer columns as upstream', () => {
    const cols = (c: CRD): [string, string, number][] => (c.spec.versions[0]?.additionalPrinterColumns ?? []).map((p) => [p.name, p.jsonPath, p.priority ?? 0]);
    assert.deepEqual(cols(clusters), [
      ['ID', '.spec.clusterID', 1],
      ['Status', '.status.state', 0],
      ['Type', '.status.type', 0],
      ['Synced', '.status.conditions[?(@.type=="ClustersSynced")].status', 0],
      ['Version', '.status.version', 1],
      ['Provider', '.status.provider', 1],
      ['Distribution', '.status.distribution', 1],
      ['Region', '.status.locality.region', 1],
      ['Status Message', '.status.message', 1],
      ['Sync Message', '.status.conditions[?(@.type=="ClustersSynced")].message', 1],
    ]);
    assert.deepEqual(cols(features), [['Feature', '.spec.featureName', 0]]);
    assert.deepEqual(cols(rules), []);
  });

  const schemaOf = (c: CRD): Schema => c.spec.versions[0]!.schema.openAPIV3Schema;

  it('core objects fit the schemas', () => {
    assert.deepEqual(check(coreClusterFeature(), schemaOf(features), '$'), []);
    for (const r of coreResourceSyncRules('cluster-registry')) assert.deepEqual(check(r, schemaOf(rules), '$'), []);
  });

  it('every Cluster and ResourceSyncRule field fits the schemas', () => {
    const cluster: Cluster = {
      apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'c' },
      spec: { clusterID: 'id', authInfo: { secretRef: { name: 's', namespace: 'n' } }, kubernetesApiEndpoints: [{ clientNetwork: 'n', serverAddress: 'a:1', caBundle: 'Y2E=' }] },
      status: {
        state: 'Ready', message: '', type: 'Local', leader: false, provider: 'kind', distribution: 'KIND', kubeProxyVersions: ['v1'], kubeletVersions: ['v1'], version: 'v1',
        locality: { region: 'r', regions: ['r'], zones: ['z'] },
        conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: 't', lastTransitionTime: 't', reason: 'r', message: 'm' }],
      },
    };
    assert.deepEqual(check(cluster, schemaOf(clusters), '$'), []);
    const rule: ResourceSyncRule = {
      apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
      kind: 'ResourceSyncRule',
      metadata: { name: 'r' },
      spec: {
        clusterFeatureMatch: [{ featureName: 'f', matchLabels: { a: 'b' }, matchExpressions: [{ key: 'k', operator: 'In', values: ['v'] }] }],
        groupVersionKind: { group: 'g', version: 'v', kind: 'K' },
        rules: [
          {
            match: [{
              objectKey: { name: 'n', namespace: 'ns' },
              namespaces: ['ns'],
              labels: [{ matchLabels: { a: 'b' }, matchExpressions: [{ key: 'k', operator: 'Exists' }] }],
              annotations: [{ matchAnnotations: { a: 'b' }, matchExpressions: [{ key: 'k', operator: 'In', values: ['v'] }] }],
              content: [{ key: 'a', value: 1 }, { key: 'b', value: 'x' }],
            }],
            mutations: {
              annotations: { add: { a: 'b' }, remove: ['c'] },
              labels: { add: { a: 'b' }, remove: ['c'] },
              groupVersionKind: { group: 'g', version: 'v', kind: 'K' },
              overrides: [{ type: 'replace', path: '/a', value: 'v', parseValue: true }],
              syncStatus: true,
            },
          },
        ],
      },
      status: {
        observedGeneration: 1,
        conditions: [{ type: 'Valid', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'RuleIsValid', message: 'rule is valid' }],
        clusters: [{ name: 'p', clusterID: 'id', state: 'Active', synced: 3, failed: 0, lastError: '', lastSyncTime: '2024-01-01T00:00:00Z' }],
      },
    };
    assert.deepEqual(check(rule, schemaOf(rules), '$'), []);
  });

  it('annotation selector values must be label values, as upstream validates', () => {
    const bad = { apiVersion: 'x', kind: 'ResourceSyncRule', spec: { groupVersionKind: {}, rules: [{ match: [{ annotations: [{ matchExpressions: [{ key: 'k', operator: 'In', values: ['not valid!'] }] }] }] }] } };
    assert.equal(check(bad, schemaOf(rules), '$').length, 1);
  });

  it('status bounds match RULE_STATUS_LIMITS', () => {
    const status = schemaOf(rules).properties!.status!.properties!;
    assert.equal(status.clusters?.maxItems, RULE_STATUS_LIMITS.maxClusters);
    assert.equal(status.clusters?.items?.properties?.lastError?.maxLength, RULE_STATUS_LIMITS.maxErrorLength);
    assert.equal(status.conditions?.maxItems, RULE_STATUS_LIMITS.maxConditions);
  });
});
