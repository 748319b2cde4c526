// The Helm chart: it lints, the plain manifests under deploy/ are what it renders, upstream's
// values mean what they meant there and every setting it passes is one the controller reads, and
// `helm install` into a real cluster creates valid objects whose identities are enough for the
// controller (run as a local process with the installed ServiceAccount and the Deployment's
// environment, since the sandbox has no kubelets) to provision the local Cluster and its reader
// credentials.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments, parse } from 'yaml';
import { CLUSTERS, SECRETS, secretText, type Secret } from '../../src/core/api/resources.ts';
import type { Cluster, KubeObject } from '../../src/core/api/types.ts';
import { ClusterConfig, Discovery, RestClient, isForbidden, parseApiVersion } from '../../src/kube/index.ts';
import { resolveConfig, SETTINGS } from '../../src/manager/config.ts';
import { freePort } from '../../src/sandbox/net.ts';
import { Component, PACKAGE_ROOT, startSandbox, tokenKubeconfig, toolPath, type Sandbox } from '../../src/sandbox/index.ts';
import { CHART_DIR, NAMESPACE, RELEASE, helmTemplate, renderedManifests } from '../../scripts/manifests.ts';
import { eventually } from '../support/eventually.ts';
import { upstreamManifestsDir } from '../support/upstream.ts';

const upstreamChart = join(upstreamManifestsDir(), 'chart');

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath?: string } };
}
interface Probe {
  httpGet?: { path?: string; port?: string };
  timeoutSeconds?: number;
}
interface Container {
  name: string;
  args?: string[];
  env?: EnvVar[];
  ports?: { name: string; containerPort: number }[];
  securityContext?: Record<string, unknown>;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
}
type Deployment = KubeObject & { spec: { selector: { matchLabels: Record<string, string> }; template: { metadata: { annotations?: Record<string, string> }; spec: { serviceAccountName: string; securityContext?: Record<string, unknown>; containers: Container[] } } } };
type Rbac = KubeObject & { rules?: { resources?: string[]; resourceNames?: string[]; verbs: string[] }[] };

/** The objects a chart (ours unless given) renders for a release (ours: RELEASE) with those values. */
async function render(opts: { release?: string; set?: readonly string[]; setJson?: readonly string[]; chart?: string } = {}): Promise<KubeObject[]> {
  const text = await helmTemplate([...(opts.set ?? []).flatMap((s) => ['--set', s]), ...(opts.setJson ?? []).flatMap((s) => ['--set-json', s])], opts);
  return parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => !!o);
}

function one<T extends KubeObject>(objects: readonly KubeObject[], kind: string, name?: string): T {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  assert.equal(found.length, 1, `one ${kind}${name ? ` ${name}` : ''} in ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found[0] as T;
}

const manager = (objects: readonly KubeObject[]): Container => one<Deployment>(objects, 'Deployment').spec.template.spec.containers.find((c) => c.name === 'manager') ?? assert.fail('no manager container');

/** The container's environment as the pod gets it (the downward API's namespace filled in). */
function envOf(c: Container): Record<string, string> {
  return Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace' ? NAMESPACE : assert.fail(`env ${e.name} has no value`))]));
}

describe('Helm chart', () => {
  it('lints strictly', async () => {
    const { stdout } = await promisify(execFile)(toolPath('helm'), ['lint', '--strict', CHART_DIR]);
    assert.match(stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('renders the plain manifests under deploy/ as they are committed (make manifests writes them)', async () => {
    for (const [path, text] of await renderedManifests()) assert.equal(readFileSync(join(PACKAGE_ROOT, path), 'utf8'), text, `${path} is stale: run make manifests`);
  });

  it("names its objects as upstream's chart does for the same release and overrides, with the same Deployment selector, and every name the controller is given matches the object and the role that grants it", async () => {
    const cases: { release: string; set?: string[] }[] = [
      { release: RELEASE },
      { release: 'prod' },
      { release: 'prod-eu-west-1-cluster-registry-long' },
      { release: 'x', set: ['nameOverride=foo'] },
      { release: 'x', set: ['fullnameOverride=registry'] },
      { release: 'x', set: ['podDisruptionBudget.enabled=true'] },
    ];
    const shared = ['Deployment', 'Service', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingWebhookConfiguration', 'PodDisruptionBudget'];
    const namesOf = (objects: readonly KubeObject[], kind: string): string[] => objects.filter((o) => o.kind === kind).map((o) => o.metadata.name ?? '').sort();
    for (const c of cases) {
      const label = `${c.release} ${c.set?.join(' ') ?? ''}`;
      const objects = await render(c);
      const theirs = await render({ ...c, chart: upstreamChart });
      for (const kind of shared) {
        const ours = namesOf(objects, kind);
        for (const name of namesOf(theirs, kind)) assert.ok(ours.includes(name), `${label}: upstream's ${kind} ${name} is ours too (ours: ${ours.join(', ')})`);
      }
      const d = one<Deployment>(objects, 'Deployment');
      assert.deepEqual(d.spec.selector.matchLabels, one<Deployment>(theirs, 'Deployment').spec.selector.matchLabels, `${label}: the selector (immutable) is upstream's`);
      const controller = d.metadata.name ?? '';
      const webhook = one(objects, 'ValidatingWebhookConfiguration').metadata.name ?? '';
      assert.equal(d.spec.template.spec.serviceAccountName, controller);
      const env = envOf(manager(objects));
      assert.equal(env['CLUSTER_VALIDATOR_WEBHOOK_NAME'], webhook);
      assert.equal(env['READER_SERVICE_ACCOUNT_NAME'], `${controller}-reader`);
      one(objects, 'ServiceAccount', `${controller}-reader`);
      const clusterRole = one<Rbac>(objects, 'ClusterRole', controller);
      assert.ok(clusterRole.rules?.some((r) => r.resources?.includes('validatingwebhookconfigurations') && r.resourceNames?.includes(webhook) && r.verbs.includes('patch')), `${label}: the controller may patch its webhook configuration`);
      const role = one<Rbac>(objects, 'Role', controller);
      assert.ok(role.rules?.some((r) => r.resources?.includes('serviceaccounts/token') && r.resourceNames?.includes(`${controller}-reader`)), `${label}: the controller may mint its reader's tokens`);
      // Hub credentials: a namespace of their own, which the controller is given and the reader is not.
      const hubNamespace = env['HUB_CREDENTIALS_NAMESPACE'] ?? '';
      assert.equal(hubNamespace, `${NAMESPACE}-hub`);
      one(objects, 'Namespace', hubNamespace);
      const binding = one<KubeObject & { subjects?: { name: string }[] }>(objects, 'RoleBinding', `${controller}-hub-credentials`);
      assert.deepEqual([binding.metadata.namespace, binding.subjects?.map((x) => x.name)], [hubNamespace, [controller]], `${label}: the controller's access to hub credentials`);
      assert.ok(!objects.some((o) => o.metadata.namespace === hubNamespace && (o as { subjects?: { name: string }[] }).subjects?.some((x) => x.name === `${controller}-reader`)), `${label}: the reader is given nothing among hub credentials`);
    }
    const elsewhere = await render({ set: ['hubCredentials.namespace=hub-creds', 'hubCredentials.createNamespace=false'] });
    assert.equal(envOf(manager(elsewhere))['HUB_CREDENTIALS_NAMESPACE'], 'hub-creds');
    assert.ok(!elsewhere.some((o) => o.kind === 'Namespace'), 'a namespace that exists already is not made');
    assert.equal(one(elsewhere, 'Role', 'cluster-registry-controller-hub-credentials').metadata.namespace, 'hub-creds');
  });

  it("passes upstream's values on with their meaning, and only settings the controller reads", async () => {
    const objects = await render({
      set: [
        'localCluster.name=east',
        'localCluster.manageSecret=false',
        'controller.apiServerEndpointAddress=https://east.example.com:6443',
        'controller.network.name=private',
        'controller.coreResourceSource.enabled=false',
        'controller.leaderElection.name=elect',
        'controller.log.verbosity=2',
        'controller.readerTokenTTL=2h',
        'health.port=9000',
        'istio.revision=canary',
      ],
    });
    const env = envOf(manager(objects));
    const known = new Set(SETTINGS.map((s) => s.env));
    for (const name of Object.keys(env)) assert.ok(known.has(name), `the controller reads ${name}`);
    const config = resolveConfig({}, env);
    assert.equal(config.provisionLocalCluster, 'east');
    assert.equal(config.manageLocalClusterSecret, false);
    assert.equal(config.apiServerEndpointAddress, 'https://east.example.com:6443');
    assert.equal(config.networkName, 'private');
    assert.equal(config.coreResourcesSourceEnabled, false);
    assert.equal(config.leaderElection.name, 'elect');
    assert.equal(config.leaderElection.namespace, NAMESPACE);
    assert.equal(config.namespace, NAMESPACE);
    assert.equal(config.log.verbosity, 2);
    assert.equal(config.readerTokenTTLSeconds, 7200);
    // Unlike upstream's chart, the health port reaches the controller, so the probes follow it.
    assert.equal(config.healthAddr, ':9000');
    assert.equal(manager(objects).ports?.find((p) => p.name === 'health')?.containerPort, 9000);
    assert.equal(one<Deployment>(objects, 'Deployment').spec.template.metadata.annotations?.['istio.io/rev'], 'canary');
    assert.equal(resolveConfig({}, envOf(manager(await render()))).provisionLocalCluster, '', 'no local Cluster unless named');
  });

  it('passes numbers whole, as a values file gives them (a float to Helm), not in e-notation the controller refuses', async () => {
    const objects = await render({
      setJson: [
        'controller.peerCache.maxBytes=33554432',
        'controller.peerCache.allPeers.maxBytes=100663296',
        'controller.idleMemoryRelease=25165824',
        'controller.peerCache.maxObjects=1000000',
        'controller.peerCache.allPeers.maxObjects=3000000',
        'controller.ruleMaxCopies=2000000',
        'controller.readerTokenTTL=1000000',
        'controller.orphanGracePeriod=1.5',
      ],
    });
    const config = resolveConfig({}, envOf(manager(objects)));
    assert.equal(config.peerCache.perPeer.maxBytes, 33554432);
    assert.equal(config.peerCache.allPeers.maxBytes, 100663296);
    assert.equal(config.idleMemoryReleaseBytes, 25165824);
    assert.deepEqual([config.peerCache.perPeer.maxObjects, config.peerCache.allPeers.maxObjects, config.syncController.maxCopiesPerRule], [1_000_000, 3_000_000, 2_000_000]);
    assert.equal(config.readerTokenTTLSeconds, 1_000_000);
    assert.equal(config.syncController.gcGracePeriodSeconds, 1.5, 'a fraction stays one');
    assert.equal(resolveConfig({}, envOf(manager(await render({ set: ['controller.idleMemoryRelease=0'] })))).idleMemoryReleaseBytes, 0, '0 turns it off');
  });

  it('drops the webhook with its port when disabled, and adds the PodDisruptionBudget and the reader widening for upstream members when asked', async () => {
    const plain = await render();
    assert.ok(!plain.some((o) => o.kind === 'PodDisruptionBudget'), 'no PodDisruptionBudget by default');
    assert.ok(!plain.some((o) => o.metadata.name?.endsWith('-upstream-peers')), 'no reader widening by default');
    const objects = await render({ set: ['webhooks.clusterValidator.enabled=false', 'podDisruptionBudget.enabled=true', 'upstreamPeers.enabled=true'] });
    assert.ok(!objects.some((o) => o.kind === 'ValidatingWebhookConfiguration'));
    const c = manager(objects);
    assert.equal(resolveConfig({}, envOf(c)).clusterValidatorWebhook.enabled, false);
    assert.ok(!c.ports?.some((p) => p.name === 'http-cl-val-wh'));
    one(objects, 'PodDisruptionBudget');
    const widening = one<Rbac>(objects, 'ClusterRole', 'cluster-registry-controller-reader-upstream-peers');
    assert.equal(widening.metadata.labels?.['cluster-registry.k8s.cisco.com/reader-aggregated'], 'true');
  });

  it('runs the controller non-root on a read-only root filesystem, probed on its health port', async () => {
    const objects = await render();
    const d = one<Deployment>(objects, 'Deployment');
    const c = manager(objects);
    assert.equal(d.spec.template.spec.securityContext?.['runAsNonRoot'], true);
    assert.deepEqual(c.securityContext, { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true });
    assert.deepEqual([c.livenessProbe?.httpGet, c.readinessProbe?.httpGet], [{ path: '/healthz', port: 'health' }, { path: '/readyz', port: 'health' }]);
    assert.deepEqual(c.args, ['controller']);
  });

  it("gives the probes time to be answered while one object's templates hold the event loop, as the values say", async () => {
    const timeouts = (objects: KubeObject[]): (number | undefined)[] => [manager(objects).livenessProbe?.timeoutSeconds, manager(objects).readinessProbe?.timeoutSeconds];
    assert.deepEqual(timeouts(await render()), [5, 5]);
    assert.deepEqual(timeouts(await render({ set: ['health.probeTimeoutSeconds=12'] })), [12, 12]);
    await assert.rejects(render({ set: ['health.probeTimeoutSeconds=0'] }), /probeTimeoutSeconds/);
  });
});

describe('Helm chart installed into a real cluster', () => {
  let sandbox: Sandbox;
  let admin: RestClient;
  const local = 'chart';

  before(async () => {
    // With its kube-controller-manager: the chart's roles are aggregated ones.
    sandbox = await startSandbox({ names: [local] });
    admin = await RestClient.fromConfig(ClusterConfig.fromFile(sandbox.clusters[0]!.kubeconfigPath));
  });
  after(async () => {
    admin?.close();
    await sandbox?.stop();
  });

  it('creates every object it renders, and its identities let the controller provision the local Cluster and hand out least-privilege reader credentials', async () => {
    const cluster = sandbox.clusters[0]!;
    const values = [`localCluster.name=${local}`];
    await promisify(execFile)(toolPath('helm'), ['install', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--create-namespace', '--kubeconfig', cluster.kubeconfigPath, ...values.flatMap((v) => ['--set', v])], { timeout: 120_000 });
    const objects = await render({ set: values });
    const discovery = new Discovery(admin);
    for (const o of objects) {
      const { group, version } = parseApiVersion(o.apiVersion ?? '');
      const r = await discovery.resourceFor({ group, version, kind: o.kind ?? '' });
      await admin.get(r, r.namespaced ? (o.metadata.namespace ?? NAMESPACE) : undefined, o.metadata.name ?? '');
    }

    // The controller as the Deployment would run it: its ServiceAccount, its environment. Only the
    // addresses are loopback ones, and the webhook is off (its Service has no endpoints here).
    const d = one<Deployment>(objects, 'Deployment');
    const tr = await admin.json<{ status?: { token?: string } }>({
      method: 'POST',
      path: `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${d.spec.template.spec.serviceAccountName}/token`,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    });
    const kubeconfig = join(sandbox.dir, 'chart-controller.kubeconfig');
    writeFileSync(kubeconfig, tokenKubeconfig({ name: local, server: cluster.server, caPem: cluster.caPem, user: 'controller', token: tr.status?.token ?? '' }), { mode: 0o600 });
    const [metrics, health] = [await freePort(), await freePort()];
    const controller = new Component(
      {
        name: 'cluster-registry-controller (chart)',
        binary: process.execPath,
        args: [join(PACKAGE_ROOT, 'src', 'cli', 'main.ts'), ...(manager(objects).args ?? [])],
        // The Deployment's environment, not the image's: this checks the chart's identities and
        // RBAC, which the image's heap flags and allocator (test/deploy/image.test.ts) do not change.
        env: { ...envOf(manager(objects)), KUBECONFIG: kubeconfig, METRICS_ADDR: `127.0.0.1:${metrics}`, HEALTH_ADDR: `127.0.0.1:${health}`, CLUSTER_VALIDATOR_WEBHOOK_ENABLED: 'false' },
        logFile: join(sandbox.dir, 'logs', 'chart-controller.log'),
        detached: false,
      },
      `http://127.0.0.1:${health}/readyz`,
    );
    cluster.extras.push(controller);
    await controller.start();

    // The webhook is off above; its configuration's RBAC is checked as the API server decides it.
    const webhook = one(objects, 'ValidatingWebhookConfiguration').metadata.name ?? '';
    const controllerMay = async (resourceAttributes: Record<string, string>): Promise<boolean> => {
      const review = await admin.json<{ status?: { allowed?: boolean } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: `system:serviceaccount:${NAMESPACE}:${d.spec.template.spec.serviceAccountName}`,
            groups: ['system:serviceaccounts', `system:serviceaccounts:${NAMESPACE}`, 'system:authenticated'],
            resourceAttributes,
          },
        },
      });
      return review.status?.allowed === true;
    };
    const may = (name: string) => controllerMay({ group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations', verb: 'patch', name });
    assert.equal(await may(webhook), true, 'the controller may patch its webhook configuration');
    assert.equal(await may('someone-elses-webhook'), false, 'and no other');
    // Hub credentials: the controller reads them and writes back the tokens it renews.
    const hubNamespace = envOf(manager(objects))['HUB_CREDENTIALS_NAMESPACE'] ?? '';
    for (const verb of ['get', 'list', 'watch', 'update']) assert.equal(await controllerMay({ resource: 'secrets', namespace: hubNamespace, verb }), true, `the controller may ${verb} hub credentials`);

    const provisioned = await eventually('the local Cluster Ready', async () => {
      const c = await admin.get<Cluster>(CLUSTERS, undefined, local).catch(() => undefined);
      return c?.status?.state === 'Ready' ? c : undefined;
    });
    assert.equal(provisioned.spec?.clusterID, (await admin.get({ group: '', version: 'v1', resource: 'namespaces' }, undefined, 'kube-system')).metadata.uid);
    const secret = await eventually('the reader Secret', () => admin.get<Secret>(SECRETS, NAMESPACE, local).catch(() => undefined));
    const readerConfig = parse(secretText(secret, 'kubeconfig') ?? '') as { users?: { user?: { token?: string } }[] };
    const reader = await RestClient.fromConfig(ClusterConfig.fromString(tokenKubeconfig({ name: local, server: cluster.server, caPem: cluster.caPem, user: 'reader', token: readerConfig.users?.[0]?.user?.token ?? '' })));
    try {
      assert.ok((await reader.list(CLUSTERS)).items.some((c) => c.metadata.name === local), 'the reader reads the registry');
      assert.ok((await reader.list(SECRETS, { namespace: NAMESPACE })).items.some((x) => x.metadata.name === local), 'and the registry credentials');
      await assert.rejects(reader.list(SECRETS, { namespace: 'kube-system' }), (err: unknown) => isForbidden(err), 'the reader reads no Secrets outside the controller namespace');
      await assert.rejects(reader.list(SECRETS, { namespace: hubNamespace }), (err: unknown) => isForbidden(err), 'nor hub credentials');
    } finally {
      reader.close();
    }
  });
});
