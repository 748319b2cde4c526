// A HubSyncRule checked before it runs, and its defaults filled in: every problem is reported at
// once with its path, so the rule's Valid condition says all that must change.
import { HUB_ANNOTATIONS } from '../api/keys.ts';
import type { HubSyncRuleSpec } from '../api/types.ts';
import { labelSelectorToSelector, type Selector } from '../../go/labels/index.ts';
import { isQualifiedName } from '../../go/labels/validation.ts';
import { DEFAULT_GENERATION_KEYS, type ContentMode, type GenerationKeys } from './desired.ts';
import { DNS1123_SUBDOMAIN, rfc1123NameProblem } from '../registry/admission.ts';
import { isNamespaceName, type HubNames } from './names.ts';

/** A rule ready to run: every default applied, the selector compiled. */
export interface HubRule {
  name: string;
  hub: string;
  credentialsSecret: string;
  gvk: { group: string; version: string; kind: string };
  /** The hub namespaces read, each on its own (what a grant covers); empty: every namespace. */
  hubNamespaces: string[];
  selector: Selector;
  names: HubNames;
  content: ContentMode;
  reportStatus: boolean;
  generationKeys: GenerationKeys;
  createNamespaces: boolean;
  deletePropagation: 'Foreground' | 'Background' | 'Orphan';
  secrets: { names: string[]; remoteSuffix: string };
}

export function defaultCredentialsSecret(hub: string): string {
  return `cluster-registry-hub-${hub}`;
}

const MAX_HUB_NAMESPACES = 64;

// What may stand in a name next to a DNS name: a suffix may start with '-' or '.'.
const NAME_PART = /^[-a-z0-9.]*$/;
const LABEL_PART = /^[-a-z0-9]*$/;

export type HubRuleCheck = { rule: HubRule } | { problems: string[] };

export function checkHubRule(name: string, spec: HubSyncRuleSpec | undefined): HubRuleCheck {
  const problems: string[] = [];
  const need = (ok: boolean, problem: string) => void (ok || problems.push(problem));
  if (!spec) return { problems: ['spec: required'] };
  need(typeof spec.hub === 'string' && DNS1123_SUBDOMAIN.test(spec.hub), `spec.hub: "${String(spec.hub)}" is not a Cluster name`);
  const credentialsSecret = spec.credentialsSecret ?? defaultCredentialsSecret(spec.hub);
  need(rfc1123NameProblem(credentialsSecret) === undefined, `spec.credentialsSecret: "${credentialsSecret}" is not a Secret name`);
  const gvk = spec.groupVersionKind ?? { version: '', kind: '' };
  need(!!gvk.version && !!gvk.kind, 'spec.groupVersionKind: version and kind are required');
  const hubNamespaces = spec.hubNamespaces ?? [];
  for (const [i, ns] of hubNamespaces.entries()) need(typeof ns === 'string' && isNamespaceName(ns), `spec.hubNamespaces[${i}]: "${String(ns)}" is not a namespace name`);
  need(new Set(hubNamespaces).size === hubNamespaces.length, 'spec.hubNamespaces: a namespace is named twice');
  need(hubNamespaces.length <= MAX_HUB_NAMESPACES, `spec.hubNamespaces: at most ${MAX_HUB_NAMESPACES} namespaces (each is a watch on the hub)`);
  let selector: Selector | undefined;
  try {
    // No selector: every object (with the suffix); Go's nil selector would match none.
    selector = labelSelectorToSelector(spec.selector ?? {});
  } catch (err) {
    problems.push(`spec.selector: ${err instanceof Error ? err.message : String(err)}`);
  }
  const names = spec.names ?? {};
  need(NAME_PART.test(names.suffix ?? ''), `spec.names.suffix: "${names.suffix ?? ''}" may hold only lower-case letters, digits, '-' and '.'`);
  need(LABEL_PART.test(names.namespaceSuffix ?? ''), `spec.names.namespaceSuffix: "${names.namespaceSuffix ?? ''}" may hold only lower-case letters, digits and '-'`);
  need(LABEL_PART.test(names.namespacePrefix ?? ''), `spec.names.namespacePrefix: "${names.namespacePrefix ?? ''}" may hold only lower-case letters, digits and '-'`);
  const generationKeys = { remote: spec.generationAnnotations?.remote ?? HUB_ANNOTATIONS.remoteGeneration, local: spec.generationAnnotations?.local ?? HUB_ANNOTATIONS.localGeneration };
  for (const [which, key] of Object.entries(generationKeys)) {
    const bad = isQualifiedName(key);
    need(bad.length === 0, `spec.generationAnnotations.${which}: "${key}" is not an annotation key: ${bad.join('; ')}`);
  }
  need(generationKeys.remote !== generationKeys.local, 'spec.generationAnnotations: remote and local must differ');
  // The echo overwrites its keys on the hub's objects: never one that means something else.
  for (const [which, key] of Object.entries(generationKeys)) {
    const taken = (key.startsWith('cluster-registry.k8s.cisco.com/') && !Object.values(DEFAULT_GENERATION_KEYS).includes(key)) || key.startsWith('kubectl.kubernetes.io/') || key.startsWith('kubernetes.io/');
    need(!taken, `spec.generationAnnotations.${which}: "${key}" is a key with another meaning`);
  }
  const secretNames = spec.secrets?.names ?? [];
  for (const [i, n] of secretNames.entries()) need(DNS1123_SUBDOMAIN.test(n), `spec.secrets.names[${i}]: "${n}" is not a Secret name`);
  const remoteSuffix = spec.secrets?.remoteSuffix ?? '';
  need(NAME_PART.test(remoteSuffix), `spec.secrets.remoteSuffix: "${remoteSuffix}" may hold only lower-case letters, digits, '-' and '.'`);
  need(spec.content === undefined || spec.content === 'Replace' || spec.content === 'Merge', `spec.content: "${String(spec.content)}" is neither Replace nor Merge`);
  need(spec.deletePropagation === undefined || ['Foreground', 'Background', 'Orphan'].includes(spec.deletePropagation), `spec.deletePropagation: "${String(spec.deletePropagation)}" is none of Foreground, Background, Orphan`);
  if (problems.length > 0 || !selector) return { problems };
  return {
    rule: {
      name,
      hub: spec.hub,
      credentialsSecret,
      gvk: { group: gvk.group ?? '', version: gvk.version ?? '', kind: gvk.kind ?? '' },
      hubNamespaces,
      selector,
      names,
      content: spec.content ?? 'Replace',
      reportStatus: spec.reportStatus ?? true,
      generationKeys,
      createNamespaces: spec.namespaces?.create ?? false,
      deletePropagation: spec.deletePropagation ?? 'Foreground',
      secrets: { names: secretNames, remoteSuffix },
    },
  };
}
