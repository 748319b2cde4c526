// Our chart's CRDs against upstream's CRDs as upstream's own controller-gen generates them from its API
// types (tools/build.sh upstream-manifests). Everything upstream declares must be in ours,
// unchanged; ours may only add (new properties, its own descriptions). A CRD that narrows
// upstream's schema is as incompatible as one that lacks a field: objects upstream writes would be
// refused, or pruned.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { deployManifests } from '../../src/registry/install.ts';
import { upstreamManifestsDir } from '../support/upstream.ts';

type Schema = { [keyword: string]: unknown; properties?: Record<string, Schema>; items?: Schema; required?: string[] };

interface Column {
  name: string;
  jsonPath: string;
  type: string;
  format?: string;
  priority?: number;
  description?: string;
}

interface Version {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: Record<string, unknown>;
  additionalPrinterColumns?: Column[];
  schema?: { openAPIV3Schema?: Schema };
}

interface CRD {
  metadata: { name?: string };
  spec: {
    [field: string]: unknown;
    group: string;
    scope: string;
    names: { kind: string; plural: string; singular?: string; listKind?: string; shortNames?: string[]; categories?: string[] };
    versions: Version[];
  };
}

const readCRDs = (dir: string): CRD[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => parse(readFileSync(join(dir, f), 'utf8')) as CRD);

const show = (v: unknown) => JSON.stringify(v);

/** Descriptions are our own wording and never affect validation or pruning. */
function withoutDescriptions(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutDescriptions);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'description').map(([k, x]) => [k, withoutDescriptions(x)]));
}

/** Where `ours` loses or changes what `up` declares at `path`; properties only ours has are additions. */
function schemaProblems(up: Schema, ours: Schema | undefined, path: string): string[] {
  if (!ours) return [`${path}: missing`];
  const problems: string[] = [];
  for (const keyword of new Set([...Object.keys(up), ...Object.keys(ours)])) {
    switch (keyword) {
      case 'description':
        break;
      case 'properties':
        for (const [name, sub] of Object.entries(up.properties ?? {})) problems.push(...schemaProblems(sub, ours.properties?.[name], `${path}.${name}`));
        break;
      case 'items':
        if (up.items) problems.push(...schemaProblems(up.items, ours.items, `${path}[]`));
        else problems.push(`${path}: ours adds items, which upstream does not have`);
        break;
      case 'required': {
        const [u, o] = [up.required ?? [], ours.required ?? []];
        for (const f of u.filter((x) => !o.includes(x))) problems.push(`${path}: ours does not require ${f} (upstream does)`);
        for (const f of o.filter((x) => !u.includes(x))) problems.push(`${path}: ours requires ${f}, which upstream does not (its objects without it would be refused)`);
        break;
      }
      default:
        // type, format, enum, pattern, default, bounds, anyOf, additionalProperties, x-kubernetes-*:
        // each changes what is accepted or how it is stored, so it must be exactly upstream's.
        if (!(keyword in up)) problems.push(`${path}: ours adds ${keyword} ${show(ours[keyword])}, which upstream does not have`);
        else if (!(keyword in ours)) problems.push(`${path}: ${keyword} missing (upstream: ${show(up[keyword])})`);
        else if (!isDeepStrictEqual(withoutDescriptions(up[keyword]), withoutDescriptions(ours[keyword]))) {
          problems.push(`${path}: ${keyword} is ${show(ours[keyword])}, upstream ${show(up[keyword])}`);
        }
    }
  }
  return problems;
}

const column = (c: Column) => ({ name: c.name, jsonPath: c.jsonPath, type: c.type, format: c.format, priority: c.priority ?? 0 });

function versionProblems(up: Version, ours: Version | undefined, at: string): string[] {
  if (!ours) return [`${at}: version missing`];
  const problems: string[] = [];
  for (const f of ['served', 'storage'] as const) {
    if (up[f] !== ours[f]) problems.push(`${at}: ${f} is ${show(ours[f])}, upstream ${show(up[f])}`);
  }
  for (const [name, sub] of Object.entries(up.subresources ?? {})) {
    if (!isDeepStrictEqual(sub, ours.subresources?.[name])) problems.push(`${at}: subresource ${name} is ${show(ours.subresources?.[name])}, upstream ${show(sub)}`);
  }
  // Upstream's columns, in upstream's order, each exactly as upstream has it; ours may add more.
  const oursColumns = new Map((ours.additionalPrinterColumns ?? []).map((c) => [c.name, c]));
  const upNames = (up.additionalPrinterColumns ?? []).map((c) => c.name);
  for (const c of up.additionalPrinterColumns ?? []) {
    const o = oursColumns.get(c.name);
    if (!o) problems.push(`${at}: printer column ${c.name} missing`);
    else if (!isDeepStrictEqual(column(c), column(o))) problems.push(`${at}: printer column ${c.name} is ${show(column(o))}, upstream ${show(column(c))}`);
  }
  const oursOrder = (ours.additionalPrinterColumns ?? []).map((c) => c.name).filter((n) => upNames.includes(n));
  if (oursOrder.length === upNames.length && !isDeepStrictEqual(oursOrder, upNames)) problems.push(`${at}: printer columns ordered ${show(oursOrder)}, upstream ${show(upNames)}`);
  const [u, o] = [up.schema?.openAPIV3Schema, ours.schema?.openAPIV3Schema];
  if (u) problems.push(...schemaProblems(u, o, `${at} schema $`));
  return problems;
}

/** Every difference of `ours` from `up` that a drop-in must not have, each naming where it is. */
function crdProblems(up: CRD, ours: CRD | undefined): string[] {
  const crd = up.metadata.name ?? '';
  if (!ours) return [`${crd}: missing from our chart's crds/`];
  const problems: string[] = [];
  for (const [field, value] of Object.entries(up.spec).concat(Object.entries(ours.spec).filter(([k]) => !(k in up.spec)))) {
    if (field === 'names' || field === 'versions') continue;
    if (!isDeepStrictEqual(value, ours.spec[field])) problems.push(`${crd}: spec.${field} is ${show(ours.spec[field])}, upstream ${show(value)}`);
  }
  const [un, on] = [up.spec.names, ours.spec.names];
  for (const f of ['kind', 'plural', 'singular', 'listKind'] as const) {
    if (un[f] !== on[f]) problems.push(`${crd}: names.${f} is ${show(on[f])}, upstream ${show(un[f])}`);
  }
  for (const f of ['shortNames', 'categories'] as const) {
    for (const n of un[f] ?? []) if (!on[f]?.includes(n)) problems.push(`${crd}: names.${f} lacks ${n}`);
  }
  for (const v of up.spec.versions) {
    problems.push(...versionProblems(v, ours.spec.versions.find((x) => x.name === v.name), `${crd} ${v.name}`));
  }
  return problems;
}

const upstream = readCRDs(join(upstreamManifestsDir(), 'crds'));
const ours = deployManifests('crds') as unknown as CRD[];
const oursNamed = (name: string | undefined) => ours.find((c) => c.metadata.name === name);

describe('our CRDs against upstream v0.2.12', () => {
  it("upstream's controller-gen reproduces the CRDs upstream ships in its chart", () => {
    // Proves the generator build (Go, pinned x/tools) is faithful before anything is compared with it.
    assert.deepEqual(upstream, readCRDs(join(upstreamManifestsDir(), 'chart', 'crds')));
    assert.deepEqual(upstream.map((c) => c.spec.names.kind), ['ClusterFeature', 'Cluster', 'ResourceSyncRule']);
  });

  for (const up of upstream) {
    it(`${up.spec.names.kind}: ours has everything upstream declares, unchanged`, () => {
      assert.deepEqual(crdProblems(up, oursNamed(up.metadata.name)), []);
    });
  }

  it('the comparison names what a changed CRD loses or narrows', () => {
    const changed = (kind: string, change: (c: CRD) => void): string[] => {
      const up = upstream.find((c) => c.spec.names.kind === kind) ?? assert.fail(`no upstream ${kind}`);
      const copy = structuredClone(oursNamed(up.metadata.name)) ?? assert.fail(`no ${kind} in our chart's crds/`);
      change(copy);
      return crdProblems(up, copy);
    };
    const schema = (c: CRD): Schema => c.spec.versions[0]?.schema?.openAPIV3Schema ?? assert.fail('no schema');
    const spec = (c: CRD): Schema => schema(c).properties?.['spec'] ?? assert.fail('no spec schema');
    const cluster = 'clusters.clusterregistry.k8s.cisco.com v1alpha1';
    const rules = 'resourcesyncrules.clusterregistry.k8s.cisco.com v1alpha1';

    assert.deepEqual(changed('Cluster', (c) => delete spec(c).properties?.['authInfo']), [`${cluster} schema $.spec.authInfo: missing`]);
    assert.deepEqual(changed('Cluster', (c) => delete spec(c).properties?.['kubernetesApiEndpoints']?.items?.properties?.['caBundle']?.['format']), [
      `${cluster} schema $.spec.kubernetesApiEndpoints[].caBundle: format missing (upstream: "byte")`,
    ]);
    assert.deepEqual(changed('Cluster', (c) => (spec(c).required = [])), [`${cluster} schema $.spec: ours does not require clusterID (upstream does)`]);
    assert.deepEqual(changed('Cluster', (c) => (spec(c).required = ['clusterID', 'authInfo'])), [
      `${cluster} schema $.spec: ours requires authInfo, which upstream does not (its objects without it would be refused)`,
    ]);
    assert.deepEqual(changed('Cluster', (c) => (spec(c).properties!['clusterID']!['maxLength'] = 36)), [`${cluster} schema $.spec.clusterID: ours adds maxLength 36, which upstream does not have`]);
    assert.deepEqual(changed('Cluster', (c) => c.spec.versions[0]?.additionalPrinterColumns?.splice(1, 1)), [`${cluster}: printer column Status missing`]);
    assert.deepEqual(changed('Cluster', (c) => (c.spec.scope = 'Namespaced')), ['clusters.clusterregistry.k8s.cisco.com: spec.scope is "Namespaced", upstream "Cluster"']);
    assert.deepEqual(changed('Cluster', (c) => (c.spec.versions[0]!.served = false)), [`${cluster}: served is false, upstream true`]);
    assert.deepEqual(changed('ResourceSyncRule', (c) => (c.spec.names.shortNames = [])), ['resourcesyncrules.clusterregistry.k8s.cisco.com: names.shortNames lacks rsr']);
    const content = (c: CRD) => spec(c).properties?.['rules']?.items?.properties?.['match']?.items?.properties?.['content']?.items?.properties?.['value'] ?? assert.fail('no content value');
    assert.deepEqual(changed('ResourceSyncRule', (c) => delete content(c)['x-kubernetes-int-or-string']), [
      `${rules} schema $.spec.rules[].match[].content[].value: x-kubernetes-int-or-string missing (upstream: true)`,
    ]);
  });
});
