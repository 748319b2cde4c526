import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseBytes, parseDuration, parseListenAddress, resolveConfig } from './config.ts';

describe('resolveConfig', () => {
  it("has upstream's defaults, ours where upstream's are bugs", () => {
    const c = resolveConfig({}, {});
    assert.equal(c.metricsAddr, ':8080');
    assert.equal(c.healthAddr, ':8090');
    assert.equal(c.namespace, 'cluster-registry');
    assert.equal(c.readerServiceAccountName, 'cluster-registry-controller-reader');
    assert.equal(c.networkName, 'default');
    assert.equal(c.leaderElection.name, 'cluster-registry-leader-election');
    assert.equal(c.leaderElection.namespace, 'cluster-registry');
    assert.equal(c.leaderElection.leaseDurationSeconds, 15);
    assert.equal(c.clusterValidatorWebhook.port, 9443);
    assert.equal(c.clusterValidatorWebhook.name, 'cluster-validator-webhook');
    assert.equal(c.clusterController.workerCount, 2);
    assert.equal(c.clusterController.refreshIntervalSeconds, 60);
    assert.equal(c.readerTokenTTLSeconds, 86_400);
  });

  it('takes a flag over its environment variable over the default', () => {
    const env = { NAMESPACE: 'from-env', NETWORK_NAME: 'env-net', LEADER_ELECTION_ENABLED: 'false' };
    const c = resolveConfig({ namespace: 'from-flag' }, env);
    assert.equal(c.namespace, 'from-flag');
    assert.equal(c.networkName, 'env-net');
    assert.equal(c.leaderElection.enabled, false);
    // The lease namespace follows the controller namespace unless set.
    assert.equal(c.leaderElection.namespace, 'from-flag');
    assert.equal(resolveConfig({}, { CLUSTERCONTROLLER_REFRESHINTERVALSECONDS: '0' }).clusterController.refreshIntervalSeconds, 0);
  });

  it("keeps hub credentials out of the controller namespace, whose Secrets members read: <namespace>-hub unless set", () => {
    assert.equal(resolveConfig({}, {}).hubCredentialsNamespace, 'cluster-registry-hub');
    assert.equal(resolveConfig({ namespace: 'registry' }, {}).hubCredentialsNamespace, 'registry-hub');
    assert.equal(resolveConfig({}, { HUB_CREDENTIALS_NAMESPACE: 'hub-creds' }).hubCredentialsNamespace, 'hub-creds');
    assert.throws(() => resolveConfig({ 'hub-credentials-namespace': 'cluster-registry' }, {}), /--hub-credentials-namespace: it is the controller namespace/);
    assert.throws(() => resolveConfig({ namespace: 'n'.repeat(62) }, {}), /--hub-credentials-namespace: .* is not a namespace name \(set it explicitly/);
  });

  it('names the flag or variable of a bad value', () => {
    assert.throws(() => resolveConfig({ 'cluster-validator-webhook-port': '99999' }, {}), /--cluster-validator-webhook-port: invalid port 99999/);
    assert.throws(() => resolveConfig({}, { LOG_FORMAT: 'xml' }), /\$LOG_FORMAT: invalid log format "xml"/);
    assert.throws(() => resolveConfig({}, { MANAGE_LOCAL_CLUSTER_SECRET: 'maybe' }), /\$MANAGE_LOCAL_CLUSTER_SECRET: invalid boolean/);
    assert.throws(() => resolveConfig({ 'reader-token-ttl': '5m' }, {}), ConfigError);
    assert.throws(() => resolveConfig({ 'leader-election-lease-duration': '0' }, {}), /at least 2s/);
    assert.throws(() => resolveConfig({}, { CLUSTERCONTROLLER_REFRESHINTERVALSECONDS: '-1' }), /must not be negative/);
  });
});

describe('parseDuration and parseListenAddress', () => {
  it('reads Go durations', () => {
    assert.equal(parseDuration('5s'), 5);
    assert.equal(parseDuration('1m30s'), 90);
    assert.equal(parseDuration('24h'), 86_400);
    assert.equal(parseDuration('1.5m'), 90);
    assert.equal(parseDuration('250ms'), 0.25);
    assert.equal(parseDuration('42'), 42);
    for (const bad of ['', 's', '5x', '1h-5m']) assert.throws(() => parseDuration(bad), ConfigError, bad);
  });
  it('reads host:port and :port', () => {
    assert.deepEqual(parseListenAddress(':8080'), { host: undefined, port: 8080 });
    assert.deepEqual(parseListenAddress('127.0.0.1:9'), { host: '127.0.0.1', port: 9 });
    assert.deepEqual(parseListenAddress('[::1]:9'), { host: '::1', port: 9 });
    assert.throws(() => parseListenAddress('8080'), ConfigError);
  });
});

describe('budgets', () => {
  it('reads sizes as bytes or with Ki, Mi, Gi, and refuses budgets that hold nothing', () => {
    assert.deepEqual(['65536', '512Ki', '32Mi', '1Gi'].map(parseBytes), [65536, 512 * 1024, 32 * 2 ** 20, 2 ** 30]);
    for (const bad of ['', '1.5Mi', '32MB', '-1', 'Mi']) assert.throws(() => parseBytes(bad), ConfigError, bad);
    const c = resolveConfig({ 'peer-cache-max-bytes': '8Mi', 'all-peers-cache-max-objects': '100', 'rule-max-copies': '7' }, {});
    assert.deepEqual(c.peerCache, { perPeer: { maxObjects: 20_000, maxBytes: 8 * 2 ** 20 }, allPeers: { maxObjects: 100, maxBytes: 96 * 2 ** 20 } });
    assert.equal(c.syncController.maxCopiesPerRule, 7);
    for (const flag of ['peer-cache-max-objects', 'all-peers-cache-max-bytes', 'rule-max-copies']) assert.throws(() => resolveConfig({ [flag]: '0' }, {}), ConfigError, flag);
  });

  it('releases idle memory past 16Mi of growth by default; 0 never, and no growth so small that releases would pause the process often', () => {
    assert.equal(resolveConfig({}, {}).idleMemoryReleaseBytes, 16 * 2 ** 20);
    assert.equal(resolveConfig({ 'idle-memory-release': '0' }, {}).idleMemoryReleaseBytes, 0);
    assert.equal(resolveConfig({}, { IDLE_MEMORY_RELEASE: '8Mi' }).idleMemoryReleaseBytes, 8 * 2 ** 20);
    for (const bad of ['1Ki', '8388607', '-1']) assert.throws(() => resolveConfig({ 'idle-memory-release': bad }, {}), ConfigError, bad);
  });
});
