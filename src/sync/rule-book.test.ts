import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RESOURCE_SYNC_RULES } from '../core/api/index.ts';
import type { ResourceSyncRule, ResourceSyncRuleSpec } from '../core/api/types.ts';
import type { RuleState } from '../core/rules/index.ts';
import { InformerFactory, silentLogger, type Informer } from '../kube/index.ts';
import { eventually } from '../../test/support/eventually.ts';
import { MemoryApiServer } from '../../test/support/sync-apiserver.ts';
import { RuleBook } from './rule-book.ts';

const NS = 'cluster-registry';
const BUILTINS = ['builtin/peer-cluster', 'builtin/peer-credentials'];

function rule(name: string, spec: Partial<ResourceSyncRuleSpec> = {}, labels?: Record<string, string>): ResourceSyncRule {
  return {
    apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
    kind: 'ResourceSyncRule',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{}], ...spec },
  };
}

/** A rule book over the rule cache of an API server, started, and what it told a listener (as `name` or `-name` for a rule gone). */
interface Fixture {
  readonly server: MemoryApiServer;
  readonly informer: Informer<ResourceSyncRule>;
  readonly book: RuleBook;
  readonly told: string[];
  readonly states: (RuleState | undefined)[];
  stop(): void;
}

async function withBook(body: (f: Fixture) => Promise<void>): Promise<void> {
  const server = await MemoryApiServer.start();
  const abort = new AbortController();
  const factory = new InformerFactory({ cluster: 'local', rest: server.rest, logger: silentLogger });
  const informer = factory.forResource<ResourceSyncRule>({ ...RESOURCE_SYNC_RULES });
  factory.start(abort.signal);
  const book = new RuleBook(informer, NS);
  const told: string[] = [];
  const states: (RuleState | undefined)[] = [];
  const unsubscribe = book.subscribe((name, state) => {
    told.push(state ? name : `-${name}`);
    states.push(state);
  });
  const stop = book.start();
  try {
    await body({ server, informer, book, told, states, stop });
  } finally {
    stop();
    unsubscribe();
    abort.abort();
    server.close();
  }
}

/** A rule book over a rule cache that never lists. */
async function unlisted(namespace: string, body: (book: RuleBook) => Promise<void>): Promise<void> {
  const server = await MemoryApiServer.start();
  try {
    const factory = new InformerFactory({ cluster: 'local', rest: server.rest, logger: silentLogger });
    await body(new RuleBook(factory.forResource<ResourceSyncRule>({ ...RESOURCE_SYNC_RULES }), namespace));
  } finally {
    server.close();
  }
}

/** What the listener was told about user rules (the built-in ones aside). */
const aboutRules = (f: Fixture): string[] => f.told.filter((t) => !BUILTINS.includes(t));

describe('RuleBook', () => {
  it('knows the built-in rules before any rule is listed', () =>
    unlisted(NS, async (book) => {
      assert.deepEqual(
        book.all().map((r) => r.name),
        BUILTINS,
      );
      assert.ok(book.all().every((r) => r.ignoresFeatures && r.compiled));
    }));

  it('reads the built-in credentials rule in the controller namespace it was given', () =>
    unlisted('elsewhere', async (book) => {
      assert.deepEqual(book.get('builtin/peer-credentials')?.spec.rules[0]?.match?.[0]?.namespaces, ['elsewhere']);
    }));

  it('tells a new listener of every rule it knows at once', () =>
    withBook(async (f) => {
      assert.deepEqual(f.told, BUILTINS);
    }));

  it('compiles a rule made here and tells its listeners', () =>
    withBook(async (f) => {
      f.server.put(rule('r'));
      await eventually('the rule told', () => aboutRules(f).includes('r'), 5_000);
      assert.ok(f.book.get('r')?.compiled);
      assert.equal(f.states.at(-1), f.book.get('r'));
    }));

  it('recompiles a rule whose spec changed and tells its listeners', () =>
    withBook(async (f) => {
      f.server.put(rule('r'));
      await eventually('the rule told', () => aboutRules(f).length === 1, 5_000);
      const first = f.book.get('r');
      f.server.put(rule('r', { rules: [{ match: [{ namespaces: ['ns'] }] }] }));
      await eventually('the change told', () => aboutRules(f).length === 2, 5_000);
      assert.notEqual(f.book.get('r')?.fingerprint, first?.fingerprint);
      assert.deepEqual(f.book.get('r')?.spec.rules, [{ match: [{ namespaces: ['ns'] }] }]);
    }));

  it('keeps the compiled rule of one whose metadata alone changed, telling no one, with the new object', () =>
    withBook(async (f) => {
      f.server.put(rule('r'));
      await eventually('the rule told', () => aboutRules(f).length === 1, 5_000);
      const first = f.book.get('r');
      f.server.put(rule('r', {}, { team: 'x' }));
      await eventually('the new object', () => f.book.get('r')?.object?.metadata.labels?.['team'] === 'x', 5_000);
      assert.equal(f.book.get('r')?.compiled, first?.compiled);
      assert.deepEqual(aboutRules(f), ['r']);
    }));

  it('tells its listeners of a rule made again under the same name while no watch was looking', () =>
    withBook(async (f) => {
      f.server.put(rule('r'));
      await eventually('the rule told', () => aboutRules(f).length === 1, 5_000);
      const first = f.book.get('r')?.object?.metadata.uid;
      // The rule deleted and made again while the cache lists anew: it sees one object replace the other.
      const release = f.server.hold('resourcesyncrules');
      f.server.expireWatches('resourcesyncrules');
      f.server.remove(rule('r'));
      f.server.put(rule('r'));
      release();
      await eventually('the new rule told', () => aboutRules(f).length === 2, 5_000);
      assert.deepEqual(aboutRules(f), ['r', 'r']);
      assert.notEqual(f.book.get('r')?.object?.metadata.uid, first);
    }));

  it('tells its listeners of a rule deleted here, and forgets it', () =>
    withBook(async (f) => {
      f.server.put(rule('r'));
      await eventually('the rule told', () => aboutRules(f).length === 1, 5_000);
      f.server.remove(rule('r'));
      await eventually('the deletion told', () => aboutRules(f).length === 2, 5_000);
      assert.deepEqual(aboutRules(f), ['r', '-r']);
      assert.equal(f.book.get('r'), undefined);
      assert.deepEqual(
        f.book.all().map((r) => r.name),
        BUILTINS,
      );
    }));

  it('holds a rule object without a spec for an invalid rule', () =>
    withBook(async (f) => {
      f.server.put({ apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name: 'bare' } });
      const state = await eventually('the rule read', () => f.book.get('bare'), 5_000);
      assert.equal(state.compiled, undefined);
      assert.ok(state.issues.length > 0);
    }));

  it('tells a listener nothing once it unsubscribed', () =>
    withBook(async (f) => {
      const late: string[] = [];
      f.book.subscribe((name) => late.push(name))();
      f.server.put(rule('r'));
      await eventually('the rule told the other listener', () => aboutRules(f).length === 1, 5_000);
      assert.deepEqual(late, BUILTINS);
    }));

  it('stops following the rule cache once stopped', () =>
    withBook(async (f) => {
      f.stop();
      f.server.put(rule('r'));
      await eventually('the rule cached', () => f.informer.store.getByName(undefined, 'r'), 5_000);
      assert.equal(f.book.get('r'), undefined);
      assert.deepEqual(aboutRules(f), []);
    }));
});
