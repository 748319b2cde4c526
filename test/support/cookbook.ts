// The rules cookbook (docs/cookbook.md) as its readers take it: the objects of its YAML blocks,
// its rules and the sample objects it shows beside them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject, ResourceSyncRule } from '../../src/core/api/types.ts';
import { PACKAGE_ROOT } from '../../src/sandbox/index.ts';

/** Objects of YAML text, as kubectl reads them (YAML 1.1). */
export const objectsOf = (text: string): KubeObject[] => parseAllDocuments(text, { version: '1.1' }).map((d) => d.toJS() as KubeObject).filter(Boolean);

const cookbook = readFileSync(join(PACKAGE_ROOT, 'docs', 'cookbook.md'), 'utf8');
/** Every object of the cookbook's YAML blocks. */
export const COOKBOOK_OBJECTS: readonly KubeObject[] = [...cookbook.matchAll(/```yaml\n([\s\S]*?)```/g)].flatMap((m) => objectsOf(m[1] ?? ''));

export const isRule = (o: KubeObject): o is ResourceSyncRule => o.kind === 'ResourceSyncRule';

/** The cookbook's recipe of that name. */
export const recipe = (name: string): ResourceSyncRule => COOKBOOK_OBJECTS.filter(isRule).find((r) => r.metadata.name === name) ?? assert.fail(`no recipe ${name}`);

/** An object the cookbook shows beside its rule, as an author would apply it. */
export const sample = (kind: string, name: string): KubeObject => COOKBOOK_OBJECTS.find((o) => o.kind === kind && o.metadata.name === name) ?? assert.fail(`no sample ${kind} ${name}`);
