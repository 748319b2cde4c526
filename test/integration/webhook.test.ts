// The Cluster validating webhook against a real API server: two replicas in this process share
// one certificate through the Secret, the leader publishes its CA and failurePolicy Fail, the API
// server enforces the decisions, renewals reach both replicas without a restart, and the leader
// leaves failurePolicy Ignore behind when it stops. Each test starts from whatever the others
// left: the local Cluster is made by the first test that needs it, and a stopped leader is
// replaced by a new one.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { ClusterConfig, InformerFactory, RestClient, createLogger } from '../../src/kube/index.ts';
import { ClusterValidatorWebhook, secretNameFor } from '../../src/registry/webhook/index.ts';
import { SECRETS } from '../../src/core/api/resources.ts';
import { pairFromSecret, secretFor } from '../../src/registry/webhook/certificate-store.ts';
import type { TlsSecret } from '../../src/registry/webhook/certificate-store.ts';
import { caBundleCertificates, generateCertificates } from '../../src/kube/certificates.ts';
import type { CertificatePair } from '../../src/kube/certificates.ts';
import { VALIDATING_WEBHOOK_CONFIGURATIONS } from '../../src/registry/webhook/configuration.ts';
import type { ValidatingWebhookConfiguration } from '../../src/registry/webhook/configuration.ts';
import { PACKAGE_ROOT, startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { freePort } from '../../src/sandbox/net.ts';
import { eventually } from '../support/eventually.ts';
import { kubectl, kubectlOk } from '../support/kubectl.ts';

const NAMESPACE = 'cluster-registry';
const CONFIG_NAME = 'cluster-validator-webhook';
const SECRET_NAME = secretNameFor(CONFIG_NAME);

/** The certificate a replica presents, verified against `ca` for 127.0.0.1. */
function servedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca }, () => {
      const fp = socket.getPeerX509Certificate()?.fingerprint256 ?? '';
      socket.end();
      resolve(fp);
    });
    socket.on('error', reject);
  });
}

const fingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;

function clusterYaml(name: string, clusterID: string): string {
  return stringify({ apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name }, spec: { clusterID } });
}

interface Replica {
  name: string;
  port: number;
  webhook: ClusterValidatorWebhook;
  stop: AbortController;
  running: Promise<void>;
  leading?: Promise<void>;
}

describe('cluster validator webhook', () => {
  let sandbox: Sandbox | undefined;
  let kubeconfig: string;
  let rest: RestClient;
  let localID: string;
  const replicas: Replica[] = [];

  const getSecret = (): Promise<TlsSecret> => rest.get<TlsSecret>(SECRETS, NAMESPACE, SECRET_NAME);
  const getConfig = (): Promise<ValidatingWebhookConfiguration> => rest.get<ValidatingWebhookConfiguration>(VALIDATING_WEBHOOK_CONFIGURATIONS, undefined, CONFIG_NAME);

  async function storedPair(): Promise<CertificatePair> {
    const pair = pairFromSecret(await getSecret());
    assert.ok(pair, 'the Secret holds a complete pair');
    return pair;
  }

  /** Both replicas serve the stored pair, and the configuration carries its CA with failurePolicy Fail. */
  async function converged(notTlsCert?: string): Promise<CertificatePair> {
    return eventually('both replicas serving the stored certificate, published with failurePolicy Fail', async () => {
      const pair = pairFromSecret(await getSecret());
      if (!pair || pair.tlsCert === notTlsCert) return undefined;
      const served = await Promise.all(replicas.map((r) => servedFingerprint(r.port, pair.caCert)));
      if (!served.every((fp) => fp === fingerprint(pair.tlsCert))) return undefined;
      const config = await getConfig();
      const caBundle = Buffer.from(pair.caCert).toString('base64');
      return config.webhooks?.every((w) => w.failurePolicy === 'Fail' && w.clientConfig.caBundle === caBundle) ? pair : undefined;
    });
  }

  /** Replica `i` on `port`; the leader also runs the leader duties, as a LeaderElector would have it. */
  function startReplica(i: number, port: number, lead: boolean): Replica {
    const name = `replica-${i}`;
    const stop = new AbortController();
    const informers = new InformerFactory({ cluster: 'cluster1', rest });
    const webhook = new ClusterValidatorWebhook({
      rest,
      informers,
      namespace: NAMESPACE,
      configurationName: CONFIG_NAME,
      port,
      host: '127.0.0.1',
      localClusterID: () => localID,
      log: createLogger({ verbosity: -1, destination: process.stderr }).child({ replica: name }),
      checkIntervalMs: 1_000,
    });
    informers.start(stop.signal);
    const replica: Replica = { name, port, webhook, stop, running: webhook.start(stop.signal) };
    if (lead) replica.leading = webhook.onStartedLeading(stop.signal);
    return replica;
  }

  /** The local Cluster "home": created unless an earlier test did. */
  async function ensureHome(): Promise<void> {
    const home = await tryCreate('home', localID, false);
    if (home.code !== 0) assert.match(home.stderr, /already exists/);
  }

  /** The API server's answer to creating a Cluster (dry run: admission runs, nothing is stored). */
  async function tryCreate(name: string, clusterID: string, dryRun: boolean): Promise<{ code: number; stderr: string }> {
    return kubectl(kubeconfig, ['create', '-f', '-', ...(dryRun ? ['--dry-run=server'] : [])], clusterYaml(name, clusterID));
  }

  before(async () => {
    sandbox = await startSandbox({ clusters: 1, controllerManager: false });
    const cluster = sandbox.clusters[0]!;
    kubeconfig = cluster.kubeconfigPath;
    const crdDir = join(PACKAGE_ROOT, 'deploy', 'charts', 'cluster-registry', 'crds');
    for (const file of readdirSync(crdDir).filter((f) => f.endsWith('.yaml'))) await kubectlOk(kubeconfig, ['apply', '-f', join(crdDir, file)]);
    await kubectlOk(kubeconfig, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/clusters.clusterregistry.k8s.cisco.com']);
    await kubectlOk(kubeconfig, ['create', 'namespace', NAMESPACE]);
    localID = (await kubectlOk(kubeconfig, ['get', 'namespace', 'kube-system', '-o', 'jsonpath={.metadata.uid}'])).trim();
    rest = await RestClient.fromConfig(ClusterConfig.fromFile(kubeconfig));

    const ports = [await freePort(), await freePort()];
    // One entry per replica, so every admission request reaches both of them.
    const webhooks = ports.map((port, i) => ({
      name: `replica-${i}.cluster-validator.clusterregistry.k8s.cisco.com`,
      clientConfig: { url: `https://127.0.0.1:${port}/validate-cluster` },
      rules: [{ apiGroups: ['clusterregistry.k8s.cisco.com'], apiVersions: ['v1alpha1'], resources: ['clusters'], operations: ['CREATE', 'UPDATE'], scope: '*' }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Ignore',
      timeoutSeconds: 10,
    }));
    await kubectlOk(
      kubeconfig,
      ['create', '-f', '-'],
      stringify({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: CONFIG_NAME }, webhooks }),
    );

    for (const [i, port] of ports.entries()) replicas.push(startReplica(i, port, i === 0));
    await Promise.all(replicas.map((r) => r.webhook.ready()));
  });

  after(async () => {
    for (const r of replicas) r.stop.abort();
    await Promise.all(replicas.map((r) => Promise.race([r.running.catch(() => undefined), sleep(15_000)])));
    rest?.close();
    await sandbox?.stop();
  });

  it('serves the same certificate from the shared Secret on both replicas, and the leader publishes its CA with failurePolicy Fail', async () => {
    const secret = await getSecret();
    assert.equal(secret.type, 'kubernetes.io/tls');
    assert.deepEqual(Object.keys(secret.data ?? {}).sort(), ['ca.crt', 'tls.crt', 'tls.key']);
    const pair = await converged();
    assert.equal(new X509Certificate(pair.tlsCert).checkIP('127.0.0.1'), '127.0.0.1');
    // Only the caBundle and failurePolicy changed; the rest of each entry is as created.
    const config = await getConfig();
    for (const w of config.webhooks ?? []) {
      assert.equal(w.sideEffects, 'None');
      assert.equal(w.timeoutSeconds, 10);
    }
  });

  it('makes the API server reject a second Cluster with the local cluster ID, and an invalid name, and allow peers', async () => {
    await ensureHome();
    // The webhooks decide from their caches; a dry run asks again until both have seen `home`.
    const denied = await eventually('the duplicate local Cluster to be denied', async () => {
      const r = await tryCreate('other', localID, true);
      return r.code !== 0 ? r : undefined;
    });
    assert.match(denied.stderr, /admission webhook "replica-\d\.cluster-validator\.clusterregistry\.k8s\.cisco\.com" denied the request/);
    assert.ok(
      denied.stderr.includes(`validating unique local cluster CR failed: a local cluster CR with name home already exists with the same clusterID ${localID}`),
      denied.stderr,
    );
    const real = await tryCreate('other', localID, false);
    assert.notEqual(real.code, 0);
    assert.match(real.stderr, /validating unique local cluster CR failed/);

    const invalid = await tryCreate('Not_A_Name', 'some-peer-id', false);
    assert.notEqual(invalid.code, 0);
    assert.match(invalid.stderr, /Not_A_Name/);

    const peer = await tryCreate('peer', '0f0e0d0c-0000-4000-8000-000000000001', false);
    assert.equal(peer.code, 0, peer.stderr);
    // An update of the local Cluster itself stays allowed.
    await kubectlOk(kubeconfig, ['label', 'cluster', 'home', 'touched=yes']);
    assert.match(await kubectlOk(kubeconfig, ['get', 'clusters', '-o', 'name']), /cluster\.clusterregistry\.k8s\.cisco\.com\/home\ncluster\.clusterregistry\.k8s\.cisco\.com\/peer/);
  });

  it('renews a certificate that is about to expire, and both replicas switch to it without a restart', async () => {
    const before = await storedPair();
    // A pair with ten minutes left of its hour: well inside the renewal margin.
    const expiring = await generateCertificates({ dnsNames: [], ipAddresses: ['127.0.0.1'], now: new Date(Date.now() - 50 * 60 * 1000), validityMs: 60 * 60 * 1000 });
    const secret = await getSecret();
    await rest.update(SECRETS, NAMESPACE, secretFor(NAMESPACE, SECRET_NAME, expiring, secret.metadata.resourceVersion));
    const renewed = await converged(expiring.tlsCert);
    assert.notEqual(renewed.tlsCert, before.tlsCert);
    assert.ok(new X509Certificate(renewed.tlsCert).validToDate.getTime() > Date.now() + 300 * 24 * 3600 * 1000);
    // The replaced CA stays trusted next to the new one during the rotation.
    assert.equal(caBundleCertificates(renewed.caCert)[1], caBundleCertificates(expiring.caCert)[0]);
    await assertApiServerUsesTheWebhooks();
  });

  it('recreates a deleted Secret, and both replicas switch to it without a restart', async () => {
    const before = await storedPair();
    await rest.delete(SECRETS, NAMESPACE, SECRET_NAME);
    const renewed = await converged(before.tlsCert);
    assert.notEqual(caBundleCertificates(renewed.caCert)[0], caBundleCertificates(before.caCert)[0]);
    await assertApiServerUsesTheWebhooks();
  });

  it('answers 400 to a malformed review on a replica that does not lead', async () => {
    const pair = await storedPair();
    const res = await fetchWithCa(replicas[1]!.port, pair.caCert, 'not json');
    assert.equal(res.status, 400);
  });

  it('sets failurePolicy Ignore when the leader stops', async () => {
    await converged();
    const leader = replicas[0]!;
    leader.stop.abort();
    await leader.running;
    try {
      const config = await getConfig();
      assert.deepEqual(
        config.webhooks?.map((w) => w.failurePolicy),
        ['Ignore', 'Ignore'],
      );
      // Its caBundle stays, so the remaining replica keeps being called successfully.
      const pair = await storedPair();
      assert.ok(config.webhooks?.every((w) => w.clientConfig.caBundle === Buffer.from(pair.caCert).toString('base64')));
    } finally {
      // A successor on the same port, for the tests that run after this one.
      replicas[0] = startReplica(0, leader.port, true);
      await replicas[0].webhook.ready();
    }
  });

  /**
   * With failurePolicy Fail and both replicas called, a TLS failure would surface as "failed
   * calling webhook"; the webhook's own denial proves the API server accepted both certificates.
   */
  async function assertApiServerUsesTheWebhooks(): Promise<void> {
    await ensureHome();
    // Allowed only until both replicas' caches hold the local Cluster.
    const denied = await eventually('both replicas to know the local Cluster', async () => {
      const r = await tryCreate('other', localID, true);
      return r.code !== 0 ? r : undefined;
    });
    assert.doesNotMatch(denied.stderr, /failed calling webhook/);
    assert.match(denied.stderr, /validating unique local cluster CR failed/);
    const allowed = await tryCreate('peer-2', '0f0e0d0c-0000-4000-8000-000000000002', true);
    assert.equal(allowed.code, 0, allowed.stderr);
  }
});

async function fetchWithCa(port: number, ca: string, body: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, method: 'POST', path: '/validate-cluster', ca, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
