import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HUB_ANNOTATIONS } from '../api/keys.ts';
import type { HubSyncRuleSpec } from '../api/types.ts';
import { checkHubRule } from './rule.ts';

const spec = (extra: Partial<HubSyncRuleSpec> = {}): HubSyncRuleSpec => ({ hub: 'management', groupVersionKind: { group: 'example.com', version: 'v1', kind: 'Database' }, ...extra });

describe('HubSyncRule checks', () => {
  it('fills in every default', () => {
    const c = checkHubRule('dbs', spec());
    assert.ok('rule' in c);
    const { selector, ...rest } = c.rule;
    assert.deepEqual(rest, {
      name: 'dbs',
      hub: 'management',
      credentialsSecret: 'cluster-registry-hub-management',
      gvk: { group: 'example.com', version: 'v1', kind: 'Database' },
      hubNamespaces: [],
      names: {},
      content: 'Replace',
      reportStatus: true,
      generationKeys: { remote: HUB_ANNOTATIONS.remoteGeneration, local: HUB_ANNOTATIONS.localGeneration },
      createNamespaces: false,
      deletePropagation: 'Foreground',
      secrets: { names: [], remoteSuffix: '' },
    });
    assert.ok(selector.matches({ any: 'thing' }), 'no selector: every object');
  });

  it('reports every problem at once, each with its path', () => {
    const c = checkHubRule(
      'bad',
      spec({
        hub: 'Not A Name',
        groupVersionKind: { group: 'example.com', version: '', kind: 'Database' },
        hubNamespaces: ['team-eu1', 'Team_EU'],
        selector: { matchExpressions: [{ key: 'tier', operator: 'Near' }] },
        names: { suffix: '-EU', namespacePrefix: 'a.b-' },
        generationAnnotations: { remote: 'same/key', local: 'same/key' },
        secrets: { names: ['ok', 'Not_OK'], remoteSuffix: '/x' },
        content: 'Patch' as 'Merge',
        deletePropagation: 'Now' as 'Orphan',
      }),
    );
    assert.ok('problems' in c);
    const paths = c.problems.map((p) => p.slice(0, p.indexOf(':')));
    assert.deepEqual(paths, ['spec.hub', 'spec.credentialsSecret', 'spec.groupVersionKind', 'spec.hubNamespaces[1]', 'spec.selector', 'spec.names.suffix', 'spec.names.namespacePrefix', 'spec.generationAnnotations', 'spec.secrets.names[1]', 'spec.secrets.remoteSuffix', 'spec.content', 'spec.deletePropagation']);
    const taken = checkHubRule('taken', spec({ generationAnnotations: { remote: 'kubectl.kubernetes.io/last-applied-configuration' } }));
    assert.ok('problems' in taken && /is a key with another meaning/.test(taken.problems.join()));
    assert.deepEqual(checkHubRule('none', undefined), { problems: ['spec: required'] });
    const twice = checkHubRule('twice', spec({ hubNamespaces: ['a', 'a'] }));
    assert.ok('problems' in twice && /named twice/.test(twice.problems.join()));
    const many = checkHubRule('many', spec({ hubNamespaces: Array.from({ length: 65 }, (_, i) => `ns-${i}`) }));
    assert.ok('problems' in many && /at most 64/.test(many.problems.join()));
  });
});
