// Differential test of the typed data model (src/go/template/typed.ts) against upstream's Go
// types through tools/oracle: the committed type model must be what the generator gives today;
// the JSON upstream's content matcher marshals (op "typedjson") and templates over a typed
// .Object (op "template" with a gvk) must agree, for fixed objects of several kinds and for
// generated ones. Pointer addresses print differently in every Go run, so both sides' are
// replaced by one placeholder.
//
// UPDATE_TYPE_MODEL=1 rewrites src/go/template/typemodel.json from the generator instead.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { gjsonGet, jsonMarshalForMatch } from '../../src/go/gjson/index.ts';
import { DecodeError, parseTemplate, templateData, typedJSON, TemplateError } from '../../src/go/template/index.ts';
import { differentialOracle } from '../support/oracle.ts';

const { oracle, tally } = differentialOracle('typed');

const MODEL_FILE = new URL('../../src/go/template/typemodel.json', import.meta.url);

interface GVK {
  group: string;
  version: string;
  kind: string;
}
type Obj = Record<string, unknown>;

const gvkOf = (o: Obj): GVK => {
  const [group, version] = String(o['apiVersion']).includes('/') ? String(o['apiVersion']).split('/') : ['', String(o['apiVersion'])];
  return { group: group!, version: version!, kind: String(o['kind']) };
};

const addresses = (s: string): string => s.replace(/0x[0-9a-f]{6,}/g, '0xADDR');

type Outcome = { ok: true; out: string } | { ok: false; err: string };

/** A JSON that does not fit its Go type fails on both sides, with different texts. */
const DECODE: Outcome = { ok: false, err: 'does not fit its Go type' };

function ours(f: () => string): Outcome {
  try {
    return { ok: true, out: addresses(f()) };
  } catch (e) {
    if (e instanceof DecodeError) return DECODE;
    if (e instanceof TemplateError) return { ok: false, err: addresses(e.message) };
    throw e;
  }
}

async function go(op: string, fields: Record<string, unknown>): Promise<Outcome> {
  const r = await oracle.call(op, fields);
  return r.ok ? { ok: true, out: addresses(r.result as string) } : { ok: false, err: addresses(r.error) };
}

/** Tallies one case; a description of the disagreement, or null. `exactErrors`: error texts must match too. */
function agree(name: string, mine: Outcome, theirs: Outcome, exactErrors: boolean): string | null {
  tally.cases++;
  const same = mine.ok && theirs.ok ? mine.out === theirs.out : !mine.ok && !theirs.ok && (!exactErrors || mine.err === theirs.err);
  if (same) {
    tally.agree++;
    return null;
  }
  return `${name}:\n  ours ${JSON.stringify(mine)}\n  go   ${JSON.stringify(theirs)}`;
}

/** What the content matcher marshals, as src/core/rules/match.ts does it. */
const contentJSON = (obj: Obj): string => typedJSON(obj, gvkOf(obj)) ?? jsonMarshalForMatch(obj);

/** json.Marshal of the typed object: ours fails (null) exactly where Go's decode fails. */
async function checkJSON(name: string, obj: Obj): Promise<string | null> {
  const gvk = gvkOf(obj);
  const mine = contentJSON(obj);
  const theirs = await go('typedjson', { gvk, object: obj });
  return agree(`json ${name}`, mine === 'null' ? DECODE : { ok: true, out: mine }, theirs, false);
}

async function checkTemplate(name: string, template: string, obj: Obj, clusters: { cluster?: Obj; localCluster?: Obj } = {}): Promise<string | null> {
  const gvk = gvkOf(obj);
  const mine = ours(() => parseTemplate(template).execute(templateData({ object: obj, objectGVK: gvk, ...clusters })));
  const decodes = (await oracle.call('typedjson', { gvk, object: obj })).ok;
  const theirs = decodes ? await go('template', { template, object: obj, gvk, ...clusters }) : DECODE;
  return agree(`template ${name} ${JSON.stringify(template)}`, mine, theirs, true);
}

/** gjson paths on our JSON against gjson on Go's JSON (what a content matcher decides on). */
async function checkPaths(name: string, obj: Obj, paths: string[]): Promise<string[]> {
  const theirs = await oracle.call('typedjson', { gvk: gvkOf(obj), object: obj });
  const mine = contentJSON(obj);
  const problems: string[] = [];
  for (const path of paths) {
    const r = gjsonGet(mine, path);
    const got: Outcome = { ok: true, out: JSON.stringify({ exists: r.exists, int: r.int().toString(), string: r.str() }) };
    let want: Outcome = { ok: false, err: 'decode' };
    if (theirs.ok) {
      const g = await oracle.call('gjson', { json: theirs.result, path });
      const res = g.ok ? (g.result as { exists: boolean; int: string; string: string }) : undefined;
      want = res ? { ok: true, out: JSON.stringify({ exists: res.exists, int: res.int, string: res.string }) } : { ok: false, err: g.ok ? '' : g.error };
    }
    const p = agree(`gjson ${name} ${path}`, mine === 'null' ? { ok: false, err: 'decode' } : got, want, false);
    if (p) problems.push(p);
  }
  return problems;
}

// ---------------------------------------------------------------- fixed objects

const META = {
  name: 'web',
  namespace: 'team-a',
  uid: '0b1c2d3e-aaaa-bbbb-cccc-000000000001',
  resourceVersion: '4242',
  generation: 3,
  creationTimestamp: '2021-03-04T05:06:07Z',
  labels: { app: 'web', 'app.kubernetes.io/name': 'web' },
  annotations: { note: '<b>&amp;</b>', 'cluster-registry.k8s.cisco.com/owner': 'c-1' },
  finalizers: ['example.com/f'],
  ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'x-1', controller: true, blockOwnerDeletion: true }],
  managedFields: [
    { manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', time: '2021-03-04T05:06:07Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:x': { '.': {} } } },
  ],
};

const OBJECTS: Record<string, Obj> = {
  secret: {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: META,
    data: { password: 'c2VjcmV0', empty: '', bin: 'AP8Q' },
    stringData: { user: 'admin' },
    type: 'Opaque',
    immutable: false,
    unknownField: 'dropped',
  },
  configmap: {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cfg', namespace: 'team-a', deletionTimestamp: '2022-01-02T03:04:05Z', deletionGracePeriodSeconds: 30 },
    data: { 'app.properties': 'a=1\nb=2', empty: '' },
    binaryData: { raw: 'AAECAw==' },
  },
  service: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'svc', namespace: 'team-a', labels: { app: 'web' } },
    spec: {
      type: 'NodePort',
      selector: { app: 'web' },
      ports: [
        { name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', nodePort: 30080 },
        { name: 'https', port: 443, targetPort: 'https' },
      ],
      clusterIP: '10.0.0.1',
      clusterIPs: ['10.0.0.1'],
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
      externalIPs: [],
    },
  },
  deployment: {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'team-a', generation: 7 },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }] },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'nginx:1.21',
              args: ['--port', '80'],
              ports: [{ containerPort: 80, name: 'http' }],
              env: [{ name: 'A', value: 'b' }, { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
              resources: { limits: { cpu: '1000m', memory: '1.5Gi' }, requests: { cpu: '0.5', memory: '100M', 'ephemeral-storage': '1e3' } },
              livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 10 },
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }],
        },
      },
    },
    status: {
      replicas: 3,
      conditions: [{ type: 'Available', status: 'True', lastUpdateTime: '2021-03-04T05:06:07Z', lastTransitionTime: '2021-03-04T07:06:07+02:00', reason: 'MinimumReplicasAvailable' }],
    },
  },
  namespace: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { env: 'prod' } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } },
  cluster: {
    apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'peer', creationTimestamp: '2021-03-04T05:06:07.5Z' },
    spec: {
      clusterID: '9e3a8f04-0d4c-4e1f-9f4a-1b2c3d4e5f60',
      authInfo: { secretRef: { name: 's', namespace: 'cluster-registry' } },
      kubernetesApiEndpoints: [{ serverAddress: 'https://10.0.0.1:6443', caBundle: 'LS0tLS1CRUdJTg==' }],
    },
    status: { state: 'Ready', type: 'Peer', locality: { region: 'eu', zones: ['a'] }, conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2021-03-04T05:06:07Z' }] },
  },
  lease: {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'lock', namespace: 'kube-system' },
    spec: { holderIdentity: 'node-1', leaseDurationSeconds: 15, acquireTime: '2021-03-04T05:06:07.123456Z', renewTime: '2021-03-04T05:06:08.000001Z' },
  },
  revision: { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'rev' }, revision: 2, data: { spec: { template: { b: 1, a: '<x>' } } } },
  pvc: {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } }, storageClassName: 'fast' },
    status: { capacity: { storage: '10737418240' }, phase: 'Bound' },
  },
  widget: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 3, ratio: 1.5, tags: ['a'], nested: { Key: 'v' } } },
};

const CLUSTERS = { cluster: OBJECTS['cluster']!, localCluster: { metadata: { name: 'local' }, spec: { clusterID: 'local-id' }, status: { state: 'Ready', type: 'Local' } } };

const COMMON_TEMPLATES = [
  '{{ .Object }}',
  '{{ .Object.ObjectMeta }}',
  '{{ printf "%v" .Object }}',
  '{{ printf "%+v" .Object }}',
  '{{ printf "%#v" .Object }}',
  '{{ printf "%s" .Object }}',
  '{{ printf "%#v" .Object.ObjectMeta }}',
  '{{ toJson .Object }}',
  '{{ toPrettyJson .Object }}',
  '{{ toString .Object }}',
  '{{ toString .Object.ObjectMeta }}',
  '{{ .Object.String }}',
  '{{ .Object.GetName }}|{{ .Object.GetNamespace }}|{{ .Object.GetUID }}|{{ .Object.GetGeneration }}|{{ .Object.GetResourceVersion }}',
  '{{ .Object.GetLabels }}|{{ .Object.GetAnnotations }}|{{ .Object.GetFinalizers }}|{{ .Object.GetOwnerReferences }}',
  '{{ .Object.GetCreationTimestamp }}|{{ .Object.GetDeletionTimestamp }}|{{ .Object.GetDeletionGracePeriodSeconds }}|{{ .Object.GetManagedFields }}',
  '{{ .Object.Name }}|{{ .Object.Labels.app }}|{{ .Object.ObjectMeta.Namespace }}|{{ .Object.Kind }}|{{ .Object.APIVersion }}',
  '{{ .Object.GroupVersionKind }}|{{ .Object.GetObjectKind.GroupVersionKind }}|{{ .Object.GroupVersionKind.Kind }}',
  '{{ .Object.CreationTimestamp }}|{{ .Object.CreationTimestamp.IsZero }}|{{ printf "%#v" .Object.CreationTimestamp }}',
  '{{ .Object.DeletionTimestamp }}|{{ printf "%v %#v" .Object.DeletionTimestamp .Object.DeletionTimestamp }}',
  '{{ typeOf .Object }}|{{ kindOf .Object }}|{{ typeOf .Object.ObjectMeta }}|{{ typeOf .Object.CreationTimestamp }}',
  '{{ .Object.metadata }}',
  '{{ .Object.Nope }}',
  '{{ .Object.ObjectMeta.Name.x }}',
  '{{ range $k, $v := .Object.Labels }}{{ $k }}={{ $v }};{{ end }}',
  '{{ range .Object.OwnerReferences }}{{ . }}|{{ .Controller }}|{{ printf "%v" . }};{{ end }}',
  '{{ range .Object.ManagedFields }}{{ .FieldsV1 }}|{{ printf "%s" .FieldsV1 }}|{{ toJson . }};{{ end }}',
  '{{ deepEqual .Object.ObjectMeta .Object.ObjectMeta }}|{{ empty .Object.Labels }}|{{ len .Object.Annotations }}',
  '{{ printf "%s-%s" .Object.GetName .Cluster.GetName }}|{{ .Cluster }}|{{ printf "%#v" .LocalCluster }}',
];

const KIND_TEMPLATES: Record<string, string[]> = {
  secret: [
    '{{ .Object.Data }}|{{ .Object.StringData }}|{{ .Object.Type }}|{{ .Object.Immutable }}',
    '{{ .Object.Data.password }}|{{ toString .Object.Data.password }}|{{ printf "%s %q %x" .Object.Data.password .Object.Data.password .Object.Data.bin }}',
    '{{ index .Object.Data "empty" }}|{{ len .Object.Data.bin }}|{{ b64enc (toString .Object.Data.password) }}|{{ .Object.Data.missing }}',
    '{{ eq .Object.Type "Opaque" }}|{{ printf "%T %T" .Object.Type .Object.Data }}',
    '{{ .Object.GetObjectKind }}|{{ .Object.GetObjectMeta }}',
  ],
  configmap: ['{{ .Object.Data }}|{{ index .Object.Data "app.properties" }}|{{ .Object.BinaryData.raw }}|{{ .Object.DeletionGracePeriodSeconds }}'],
  service: [
    '{{ .Object.Spec }}',
    '{{ printf "%v" .Object.Spec }}|{{ toString .Object.Spec }}',
    '{{ .Object.Spec.Ports }}|{{ printf "%#v" .Object.Spec.Ports }}',
    '{{ range .Object.Spec.Ports }}{{ . }}|{{ .TargetPort }}|{{ .Port }}|{{ .TargetPort.String }}|{{ .Protocol }};{{ end }}',
    '{{ (index .Object.Spec.Ports 1).TargetPort }}|{{ printf "%v %#v" (index .Object.Spec.Ports 1).TargetPort (index .Object.Spec.Ports 1).TargetPort }}',
    '{{ .Object.Spec.SessionAffinityConfig }}|{{ .Object.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds }}|{{ .Object.Spec.ExternalIPs }}',
    '{{ .Object.Status }}|{{ .Object.Status.LoadBalancer }}|{{ toJson .Object.Status }}',
    '{{ (index .Object.Spec.Ports 0).TargetPort.IntVal }}|{{ (index .Object.Spec.Ports 0).TargetPort.Type }}',
  ],
  deployment: [
    '{{ .Object.Spec }}',
    '{{ .Object.Spec.Replicas }}|{{ printf "%v" .Object.Spec.Replicas }}',
    '{{ .Object.Spec.Template }}',
    '{{ .Object.Spec.Template.Spec.Containers }}',
    '{{ (index .Object.Spec.Template.Spec.Containers 0).Resources }}',
    '{{ (index .Object.Spec.Template.Spec.Containers 0).Resources.Limits }}|{{ (index .Object.Spec.Template.Spec.Containers 0).Resources.Requests.cpu }}',
    '{{ printf "%#v" (index .Object.Spec.Template.Spec.Containers 0).Resources.Limits }}',
    '{{ (index .Object.Spec.Template.Spec.Containers 0).Resources.Limits.cpu.i }}',
    '{{ range $k, $v := (index .Object.Spec.Template.Spec.Containers 0).Resources.Requests }}{{ $k }}={{ $v }}/{{ toJson $v }};{{ end }}',
    '{{ (index .Object.Spec.Template.Spec.Volumes 0).EmptyDir.SizeLimit }}|{{ (index .Object.Spec.Template.Spec.Volumes 0).EmptyDir }}',
    '{{ .Object.Spec.Strategy }}|{{ .Object.Spec.Strategy.RollingUpdate.MaxSurge }}|{{ .Object.Spec.Selector }}',
    '{{ .Object.Status.Conditions }}|{{ range .Object.Status.Conditions }}{{ .LastTransitionTime }};{{ end }}',
    '{{ toJson .Object.Spec.Template }}',
  ],
  namespace: ['{{ .Object.Spec }}|{{ .Object.Status.Phase }}|{{ .Object.Spec.Finalizers }}'],
  cluster: ['{{ .Object.Spec }}|{{ .Object.Spec.KubernetesAPIEndpoints }}|{{ .Object.Status.Locality }}|{{ .Object.CreationTimestamp }}'],
  lease: ['{{ .Object.Spec }}|{{ .Object.Spec.RenewTime }}|{{ printf "%#v" .Object.Spec.AcquireTime }}|{{ toJson .Object.Spec }}'],
  revision: ['{{ .Object.Data }}|{{ printf "%s" .Object.Data.Raw }}|{{ .Object.Revision }}|{{ toJson .Object }}'],
  pvc: ['{{ .Object.Spec }}|{{ .Object.Status.Capacity.storage }}|{{ .Object.Spec.Resources.Requests }}'],
  widget: ['{{ .Object.Object.spec.size }}|{{ .Object.GetName }}|{{ typeOf .Object }}'],
};

const GJSON_PATHS = [
  'kind',
  'apiVersion',
  'metadata.name',
  'metadata.creationTimestamp',
  'metadata.labels.app',
  'metadata.annotations.note',
  'metadata.managedFields.0.fieldsV1',
  'data.password',
  'data.bin',
  'stringData.user',
  'unknownField',
  'spec.ports.1.targetPort',
  'spec.ports.#',
  'spec.template.spec.containers.0.resources.limits.cpu',
  'spec.template.spec.containers.0.resources.requests.ephemeral-storage',
  'spec.template.metadata.creationTimestamp',
  'status.loadBalancer',
  'status',
  'spec.renewTime',
  'data.spec.template',
  'status.capacity.storage',
];

describe('typed objects vs upstream Go types', () => {
  it('the committed type model is what tools/oracle generates', async () => {
    const generated = await oracle.call('typemodel', {});
    assert.ok(generated.ok, JSON.stringify(generated));
    if (process.env['UPDATE_TYPE_MODEL']) writeFileSync(MODEL_FILE, JSON.stringify(generated.result) + '\n');
    tally.cases++;
    assert.deepEqual(JSON.parse(readFileSync(MODEL_FILE, 'utf8')), generated.result, 'regenerate with UPDATE_TYPE_MODEL=1');
    tally.agree++;
  });

  it('json.Marshal of fixed objects (what content matchers see)', async () => {
    const problems: string[] = [];
    for (const [name, obj] of Object.entries(OBJECTS)) {
      const p = await checkJSON(name, obj);
      if (p) problems.push(p);
      problems.push(...(await checkPaths(name, obj, GJSON_PATHS)));
    }
    assert.deepEqual(problems, []);
  });

  it('templates over fixed typed objects', async () => {
    const problems: string[] = [];
    for (const [name, obj] of Object.entries(OBJECTS)) {
      for (const t of [...COMMON_TEMPLATES, ...(KIND_TEMPLATES[name] ?? [])]) {
        const p = await checkTemplate(name, t, obj, CLUSTERS);
        if (p) problems.push(p);
      }
    }
    assert.deepEqual(problems.slice(0, 20), [], `${problems.length} disagree`);
  });
});

// ---------------------------------------------------------------- generated objects

const text = fc.oneof(fc.constantFrom('', 'a', 'web', '<b>&</b>', 'héllo', 'a b', '0', 'true', '%s'), fc.string({ maxLength: 8 }));
const key = fc.constantFrom('a', 'b', 'app', 'app.kubernetes.io/name', 'x_y', 'Key', '');
const strMap = fc.dictionary(key, text, { maxKeys: 4 });
const base64 = fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b).toString('base64'));
const timestamp = fc
  .tuple(fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }), fc.constantFrom('', '.5', '.123456', '.000000001'), fc.constantFrom('Z', '+02:00', '-07:30'))
  .map(([d, frac, zone]) => d.toISOString().slice(0, 19) + frac + zone);
/** Quantities: canonical and not, every suffix, the inf.Dec path, and invalid text. */
const quantity = fc.oneof(
  fc
    .tuple(fc.constantFrom('', '-', '+'), fc.stringMatching(/^[0-9]{1,20}$/), fc.option(fc.stringMatching(/^[0-9]{0,12}$/)), fc.constantFrom('', 'm', 'k', 'M', 'G', 'T', 'P', 'E', 'n', 'u', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei', 'e3', 'E-2', 'e+10', 'e0'))
    .map(([sign, num, frac, suffix]) => `${sign}${num}${frac === null ? '' : '.' + frac}${suffix}`),
  fc.constantFrom('1000m', '0.5', '1.5Gi', '100M', '1e3', '0', '1024', '1023Ki', '0.0001', '12345678901234567890', '1Ei', '9Ei', '0.1Ki', 'x', '', '1.2.3', ' 5 '),
  fc.integer({ min: 0, max: 1e6 }),
);
const resources = fc.dictionary(fc.constantFrom('cpu', 'memory', 'storage', 'ephemeral-storage'), quantity, { maxKeys: 3 });

const metadata = fc.record(
  {
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
    namespace: fc.constantFrom('team-a', 'default'),
    uid: fc.uuid(),
    generation: fc.nat({ max: 1000 }),
    creationTimestamp: timestamp,
    deletionTimestamp: timestamp,
    labels: strMap,
    annotations: strMap,
    finalizers: fc.array(fc.constantFrom('a/b', 'kubernetes'), { maxLength: 2 }),
  },
  { requiredKeys: ['name'] },
);

const port = fc.record(
  {
    name: fc.constantFrom('http', 'https', 'metrics'),
    port: fc.integer({ min: 1, max: 65535 }),
    targetPort: fc.oneof(fc.integer({ min: 0, max: 65535 }), fc.constantFrom('http', 'web', '8080')),
    protocol: fc.constantFrom('TCP', 'UDP'),
    nodePort: fc.integer({ min: 30000, max: 32767 }),
  },
  { requiredKeys: ['port'] },
);

const arbObject: fc.Arbitrary<Obj> = fc.oneof(
  fc.record({ apiVersion: fc.constant('v1'), kind: fc.constant('Secret'), metadata, data: fc.dictionary(key, base64, { maxKeys: 3 }), stringData: strMap, type: fc.constantFrom('Opaque', 'kubernetes.io/tls', '') }, { requiredKeys: ['apiVersion', 'kind', 'metadata'] }),
  fc.record({ apiVersion: fc.constant('v1'), kind: fc.constant('ConfigMap'), metadata, data: strMap, binaryData: fc.dictionary(key, base64, { maxKeys: 2 }), immutable: fc.boolean() }, { requiredKeys: ['apiVersion', 'kind', 'metadata'] }),
  fc.record({
    apiVersion: fc.constant('v1'),
    kind: fc.constant('Service'),
    metadata,
    spec: fc.record({ type: fc.constantFrom('ClusterIP', 'NodePort'), ports: fc.array(port, { maxLength: 3 }), selector: strMap, clusterIP: fc.constantFrom('10.0.0.1', 'None') }, { requiredKeys: [] }),
  }),
  fc.record({
    apiVersion: fc.constant('apps/v1'),
    kind: fc.constant('Deployment'),
    metadata,
    spec: fc.record(
      {
        replicas: fc.nat({ max: 10 }),
        selector: fc.record({ matchLabels: strMap }),
        template: fc.record({
          metadata: fc.record({ labels: strMap }),
          spec: fc.record({ containers: fc.array(fc.record({ name: fc.constantFrom('web', 'side'), image: fc.constantFrom('nginx', 'busybox:1'), resources: fc.record({ limits: resources, requests: resources }, { requiredKeys: [] }) }), { maxLength: 2 }) }),
        }),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({ apiVersion: fc.constant('v1'), kind: fc.constant('PersistentVolumeClaim'), metadata, spec: fc.record({ resources: fc.record({ requests: resources }) }) }),
  fc.record({ apiVersion: fc.constant('v1'), kind: fc.constant('Namespace'), metadata, status: fc.record({ phase: fc.constantFrom('Active', 'Terminating') }) }),
  fc.record({ apiVersion: fc.constant('coordination.k8s.io/v1'), kind: fc.constant('Lease'), metadata, spec: fc.record({ holderIdentity: text, renewTime: timestamp.map((t) => t.replace(/\.\d+|(?=[Z+-]\d*:?\d*$)/, '.000001')) }, { requiredKeys: [] }) }),
  fc.record({
    apiVersion: fc.constant('clusterregistry.k8s.cisco.com/v1alpha1'),
    kind: fc.constant('Cluster'),
    metadata,
    spec: fc.record({ clusterID: fc.uuid(), kubernetesApiEndpoints: fc.array(fc.record({ serverAddress: text, caBundle: base64 }), { maxLength: 2 }) }),
    status: fc.record({ state: fc.constantFrom('Ready', 'Missing'), leader: fc.boolean(), locality: fc.record({ region: text }) }, { requiredKeys: [] }),
  }),
  // shapes that do not fit their Go type: both sides must refuse them
  fc.record({ apiVersion: fc.constant('v1'), kind: fc.constant('ConfigMap'), metadata, data: fc.dictionary(key, fc.oneof(fc.integer(), fc.boolean(), text), { maxKeys: 2 }) }),
);

const GENERATED_TEMPLATES = [
  '{{ .Object }}',
  '{{ printf "%#v" .Object }}',
  '{{ toJson .Object }}',
  '{{ .Object.GetName }}|{{ .Object.GetLabels }}|{{ .Object.GetCreationTimestamp }}|{{ .Object.GetDeletionTimestamp }}',
  '{{ .Object.Spec }}',
  '{{ printf "%+v" .Object.Spec }}',
  '{{ toString .Object.Status }}',
  '{{ range $k, $v := .Object.Data }}{{ $k }}={{ $v }}/{{ printf "%s" $v }};{{ end }}',
  '{{ range .Object.Spec.Ports }}{{ . }}{{ .TargetPort }};{{ end }}',
  '{{ range .Object.Spec.Template.Spec.Containers }}{{ .Resources }}{{ range $k, $v := .Resources.Limits }}{{ $k }}={{ $v }}{{ printf "%#v" $v }}{{ toJson $v }};{{ end }}{{ end }}',
  '{{ range $k, $v := .Object.Spec.Resources.Requests }}{{ $k }}={{ $v }}|{{ toJson $v }};{{ end }}',
  '{{ .Object.Spec.RenewTime }}|{{ printf "%#v" .Object.Spec.RenewTime }}',
];
const GENERATED_PATHS = ['kind', 'metadata.creationTimestamp', 'metadata.deletionTimestamp', 'data.*', 'data.a', 'binaryData.a', 'spec.ports.#.targetPort', 'spec.template.spec.containers.0.resources.limits', 'spec.resources.requests.storage', 'spec.renewTime', 'status'];

describe('generated typed objects vs upstream Go types', () => {
  it('json.Marshal and gjson paths', async () => {
    const problems: string[] = [];
    await fc.assert(
      fc.asyncProperty(arbObject, fc.subarray(GENERATED_PATHS, { minLength: 1, maxLength: 3 }), async (obj, paths) => {
        const p = [await checkJSON('generated', obj), ...(await checkPaths('generated', obj, paths))].filter((x) => x !== null);
        problems.push(...p);
        return p.length === 0;
      }),
      { numRuns: Number(process.env['DIFFERENTIAL_RUNS'] ?? 400), seed: Number(process.env['TYPED_FC_SEED'] ?? 20212) },
    ).catch((e: unknown) => problems.push(String(e)));
    assert.deepEqual(problems.slice(0, 5), []);
  });

  it('templates', async () => {
    const problems: string[] = [];
    await fc.assert(
      fc.asyncProperty(arbObject, fc.constantFrom(...GENERATED_TEMPLATES), async (obj, template) => {
        const p = await checkTemplate('generated', template, obj, CLUSTERS);
        if (p) problems.push(p);
        return p === null;
      }),
      { numRuns: Number(process.env['DIFFERENTIAL_RUNS'] ?? 400), seed: Number(process.env['TYPED_FC_SEED'] ?? 20212) },
    ).catch((e: unknown) => problems.push(String(e)));
    assert.deepEqual(problems.slice(0, 5), []);
  });
});

// ---------------------------------------------------------------- generated templates

const TYPED_PATHS = [
  '.Object', '.Object.ObjectMeta', '.Object.TypeMeta', '.Object.Name', '.Object.Labels', '.Object.CreationTimestamp', '.Object.DeletionTimestamp',
  '.Object.OwnerReferences', '.Object.ManagedFields', '.Object.Data', '.Object.Data.password', '.Object.StringData', '.Object.Type', '.Object.Immutable',
  '.Object.BinaryData', '.Object.Spec', '.Object.Spec.Ports', '.Object.Spec.Replicas', '.Object.Spec.Template', '.Object.Spec.Template.Spec.Containers',
  '.Object.Spec.Selector', '.Object.Spec.Strategy', '.Object.Spec.Strategy.RollingUpdate.MaxSurge', '.Object.Status', '.Object.Status.Conditions',
  '.Object.Spec.SessionAffinityConfig', '.Object.Spec.RenewTime', '.Object.Spec.Resources.Requests', '.Object.GetLabels', '.Object.GetName',
  '.Object.GetOwnerReferences', '.Object.GetManagedFields', '.Object.GroupVersionKind', '.Object.GetObjectMeta', '.Cluster.Spec', '.Cluster.Status.Conditions',
  '.LocalCluster.Status.Locality',
];
const TYPED_FNS = ['', 'toString', 'toJson', 'toPrettyJson', 'printf "%v"', 'printf "%+v"', 'printf "%#v"', 'printf "%s"', 'printf "%q"', 'printf "%t"', 'printf "%8.3v"', 'printf "%T"', 'len', 'empty', 'kindOf', 'typeOf', 'default "x"', 'quote', 'not', 'first', 'keys', 'deepCopy', 'print'];
const typedTemplate = fc
  .tuple(fc.constantFrom(...TYPED_PATHS), fc.constantFrom(...TYPED_FNS), fc.constantFrom('plain', 'with', 'if', 'range', 'index'))
  .map(([path, fn, form]) => {
    const pipe = fn ? `${path} | ${fn}` : path;
    switch (form) {
      case 'with':
        return `{{ with ${path} }}[{{ . }}]{{ else }}none{{ end }}`;
      case 'if':
        return `{{ if ${path} }}yes{{ else }}no{{ end }}`;
      case 'range':
        return `{{ range $k, $v := ${path} }}{{ $k }}={{ $v }};{{ else }}empty{{ end }}`;
      case 'index':
        return `{{ index ${path} 0 }}`;
      default:
        return `{{ ${pipe} }}`;
    }
  });

describe('generated templates over typed objects', () => {
  it('paths, functions and control structures', async () => {
    const problems: string[] = [];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(OBJECTS)), typedTemplate, async (name, template) => {
        const p = await checkTemplate(name, template, OBJECTS[name]!, CLUSTERS);
        if (p) problems.push(p);
        return p === null;
      }),
      { numRuns: Number(process.env['DIFFERENTIAL_RUNS'] ?? 600), seed: Number(process.env['TYPED_FC_SEED'] ?? 20213) },
    ).catch((e: unknown) => problems.push(String(e)));
    assert.deepEqual(problems.slice(0, 5), []);
  });
});
