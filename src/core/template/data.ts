// The Go-compatible template data upstream passes to override templates:
//   map[string]interface{}{"Object": *unstructured.Unstructured, "Cluster": *v1alpha1.Cluster,
//                          "LocalCluster": *v1alpha1.Cluster}
// Unstructured exposes its accessor methods and the raw map as field Object; Cluster is the
// typed upstream struct (field names and json tags of api/v1alpha1 and meta/v1 ObjectMeta),
// decoded from JSON the way encoding/json does.
import { marshalJSON } from './gojson.ts';
import {
  T,
  T_MAP_ANY,
  T_MAP_STRING,
  T_SLICE_STRING,
  anyMap,
  asMap,
  asStr,
  asStruct,
  bool,
  fromJSON,
  int64,
  ptrTo,
  sliceOf,
  str,
  zeroOf,
  type GoType,
  type Method,
  type StructField,
  type Value,
} from './values.ts';

function named(name: string, base: GoType): GoType {
  return { ...base, name, named: true };
}

function struct(name: string, fields: StructField[], methods?: Map<string, Method>): GoType {
  return { kind: 'struct', name, named: true, fields, ...(methods ? { methods } : {}) };
}

const f = (name: string, type: GoType, json: string, embedded = false): StructField => ({ name, type, json, embedded });

const getter = (result: GoType, fn: (recv: Value) => Value): Method => ({
  ptr: true,
  sig: { params: [], result },
  fn: (recv) => {
    if (recv.v === null) throw new Error('runtime error: invalid memory address or nil pointer dereference');
    return fn(recv);
  },
});

// ---------------------------------------------------------------- meta/v1 and types

const UID = named('types.UID', T.string);

/** time.Time's String() layout "2006-01-02 15:04:05.999999999 -0700 MST", in UTC. */
function timeString(iso: string | null): string {
  if (!iso) return '0001-01-01 00:00:00 +0000 UTC';
  const d = new Date(iso);
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000 UTC`;
}

const timeOf = (v: Value): string | null => (asStruct(v)['rfc3339']?.v as string | undefined) ?? null;

/** metav1.Time: prints through the embedded time.Time's String(), marshals as RFC 3339 or null. */
const TIME: GoType = {
  kind: 'struct',
  name: 'v1.Time',
  named: true,
  fields: [],
  stringer: (v) => timeString(timeOf(v)),
  marshalJSON: (v) => {
    const t = timeOf(v);
    return t ? JSON.stringify(new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z')) : 'null';
  },
  methods: new Map([['IsZero', { ptr: true, sig: { params: [], result: T.bool }, fn: (v) => bool(v.v === null || !timeOf(v)) }]]),
};

const OWNER_REFERENCE = struct('v1.OwnerReference', [
  f('APIVersion', T.string, 'apiVersion'),
  f('Kind', T.string, 'kind'),
  f('Name', T.string, 'name'),
  f('UID', UID, 'uid'),
  f('Controller', ptrTo(T.bool), 'controller,omitempty'),
  f('BlockOwnerDeletion', ptrTo(T.bool), 'blockOwnerDeletion,omitempty'),
]);

const FIELDS_V1 = struct('v1.FieldsV1', [f('Raw', sliceOf(T.uint8), '-')]);

const MANAGED_FIELDS_ENTRY = struct('v1.ManagedFieldsEntry', [
  f('Manager', T.string, 'manager,omitempty'),
  f('Operation', named('v1.ManagedFieldsOperationType', T.string), 'operation,omitempty'),
  f('APIVersion', T.string, 'apiVersion,omitempty'),
  f('Time', ptrTo(TIME), 'time,omitempty'),
  f('FieldsType', T.string, 'fieldsType,omitempty'),
  f('FieldsV1', ptrTo(FIELDS_V1), 'fieldsV1,omitempty'),
]);

const field = (name: string) => (recv: Value): Value => asStruct(recv)[name]!;

const OBJECT_META = struct(
  'v1.ObjectMeta',
  [
    f('Name', T.string, 'name,omitempty'),
    f('GenerateName', T.string, 'generateName,omitempty'),
    f('Namespace', T.string, 'namespace,omitempty'),
    f('SelfLink', T.string, 'selfLink,omitempty'),
    f('UID', UID, 'uid,omitempty'),
    f('ResourceVersion', T.string, 'resourceVersion,omitempty'),
    f('Generation', T.int64, 'generation,omitempty'),
    f('CreationTimestamp', TIME, 'creationTimestamp,omitempty'),
    f('DeletionTimestamp', ptrTo(TIME), 'deletionTimestamp,omitempty'),
    f('DeletionGracePeriodSeconds', ptrTo(T.int64), 'deletionGracePeriodSeconds,omitempty'),
    f('Labels', T_MAP_STRING, 'labels,omitempty'),
    f('Annotations', T_MAP_STRING, 'annotations,omitempty'),
    f('OwnerReferences', sliceOf(OWNER_REFERENCE), 'ownerReferences,omitempty'),
    f('Finalizers', T_SLICE_STRING, 'finalizers,omitempty'),
    f('ClusterName', T.string, 'clusterName,omitempty'),
    f('ManagedFields', sliceOf(MANAGED_FIELDS_ENTRY), 'managedFields,omitempty'),
  ],
  new Map(
    (
      [
        ['GetName', T.string, 'Name'],
        ['GetGenerateName', T.string, 'GenerateName'],
        ['GetNamespace', T.string, 'Namespace'],
        ['GetSelfLink', T.string, 'SelfLink'],
        ['GetUID', UID, 'UID'],
        ['GetResourceVersion', T.string, 'ResourceVersion'],
        ['GetGeneration', T.int64, 'Generation'],
        ['GetCreationTimestamp', TIME, 'CreationTimestamp'],
        ['GetDeletionTimestamp', ptrTo(TIME), 'DeletionTimestamp'],
        ['GetDeletionGracePeriodSeconds', ptrTo(T.int64), 'DeletionGracePeriodSeconds'],
        ['GetLabels', T_MAP_STRING, 'Labels'],
        ['GetAnnotations', T_MAP_STRING, 'Annotations'],
        ['GetOwnerReferences', sliceOf(OWNER_REFERENCE), 'OwnerReferences'],
        ['GetFinalizers', T_SLICE_STRING, 'Finalizers'],
        ['GetClusterName', T.string, 'ClusterName'],
        ['GetManagedFields', sliceOf(MANAGED_FIELDS_ENTRY), 'ManagedFields'],
      ] as const
    ).map(([m, t, fld]) => [m, getter(t, field(fld))]),
  ),
);

const TYPE_META = struct('v1.TypeMeta', [f('Kind', T.string, 'kind,omitempty'), f('APIVersion', T.string, 'apiVersion,omitempty')]);

// ---------------------------------------------------------------- v1alpha1.Cluster

const NAMESPACED_NAME = struct('v1alpha1.NamespacedName', [
  f('Name', T.string, 'name,omitempty'),
  f('Namespace', T.string, 'namespace,omitempty'),
]);
const AUTH_INFO = struct('v1alpha1.AuthInfo', [f('SecretRef', NAMESPACED_NAME, 'secretRef,omitempty')]);
const KUBERNETES_API_ENDPOINT = struct('v1alpha1.KubernetesAPIEndpoint', [
  f('ClientNetwork', T.string, 'clientNetwork,omitempty'),
  f('ServerAddress', T.string, 'serverAddress,omitempty'),
  f('CABundle', sliceOf(T.uint8), 'caBundle,omitempty'),
]);
const CLUSTER_SPEC = struct('v1alpha1.ClusterSpec', [
  f('ClusterID', UID, 'clusterID'),
  f('AuthInfo', AUTH_INFO, 'authInfo,omitempty'),
  f('KubernetesAPIEndpoints', sliceOf(KUBERNETES_API_ENDPOINT), 'kubernetesApiEndpoints,omitempty'),
]);
const LOCALITY = struct('v1alpha1.Locality', [
  f('Region', T.string, 'region,omitempty'),
  f('Regions', T_SLICE_STRING, 'regions,omitempty'),
  f('Zones', T_SLICE_STRING, 'zones,omitempty'),
]);
const CLUSTER_METADATA = struct('v1alpha1.ClusterMetadata', [
  f('Provider', T.string, 'provider,omitempty'),
  f('Distribution', T.string, 'distribution,omitempty'),
  f('KubeProxyVersions', T_SLICE_STRING, 'kubeProxyVersions,omitempty'),
  f('KubeletVersions', T_SLICE_STRING, 'kubeletVersions,omitempty'),
  f('Version', T.string, 'version,omitempty'),
  f('Locality', ptrTo(LOCALITY), 'locality,omitempty'),
]);
const CLUSTER_CONDITION = struct('v1alpha1.ClusterCondition', [
  f('Type', named('v1alpha1.ClusterConditionType', T.string), 'type'),
  f('Status', named('v1.ConditionStatus', T.string), 'status'),
  f('LastHeartbeatTime', TIME, 'lastHeartbeatTime,omitempty'),
  f('LastTransitionTime', TIME, 'lastTransitionTime,omitempty'),
  f('Reason', T.string, 'reason,omitempty'),
  f('Message', T.string, 'message,omitempty'),
  f('TrueIsFailure', T.bool, '-'),
]);
const CLUSTER_STATUS = struct('v1alpha1.ClusterStatus', [
  f('State', named('v1alpha1.ClusterState', T.string), 'state,omitempty'),
  f('Message', T.string, 'message,omitempty'),
  f('Type', named('v1alpha1.ClusterType', T.string), 'type,omitempty'),
  f('Leader', T.bool, 'leader,omitempty'),
  f('ClusterMetadata', CLUSTER_METADATA, ',inline', true),
  f('Conditions', sliceOf(CLUSTER_CONDITION), 'conditions,omitempty'),
]);
const CLUSTER = struct('v1alpha1.Cluster', [
  f('TypeMeta', TYPE_META, ',inline', true),
  f('ObjectMeta', OBJECT_META, 'metadata,omitempty', true),
  f('Spec', CLUSTER_SPEC, 'spec,omitempty'),
  f('Status', CLUSTER_STATUS, 'status,omitempty'),
]);

export const CLUSTER_PTR = ptrTo(CLUSTER);

export class DecodeError extends Error {}

function jsonKind(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'array';
  return typeof x === 'object' ? 'object' : typeof x;
}

/** encoding/json Unmarshal of plain JSON into a typed Go value (keys match case-insensitively). */
export function decodeTyped(t: GoType, x: unknown, path: string): Value {
  const fail = (): never => {
    throw new DecodeError(`json: cannot unmarshal ${jsonKind(x)} into Go struct field ${path} of type ${t.name}`);
  };
  if (x === null || x === undefined) return zeroOf(t);
  if (t === TIME) {
    if (typeof x !== 'string' || Number.isNaN(Date.parse(x))) fail();
    return { t, v: { rfc3339: { t: T.string, v: x } } };
  }
  switch (t.kind) {
    case 'string':
      return typeof x === 'string' ? { t, v: x } : fail();
    case 'bool':
      return typeof x === 'boolean' ? { t, v: x } : fail();
    case 'int64':
      return typeof x === 'number' && Number.isInteger(x) ? { t, v: BigInt(x) } : fail();
    case 'ptr':
      return { t, v: decodeTyped(t.elem!, x, path) };
    case 'slice':
      if (t.elem?.kind === 'uint8') {
        if (typeof x !== 'string') fail();
        return { t, v: [...Buffer.from(x as string, 'base64')].map((b) => ({ t: T.uint8, v: BigInt(b) })) };
      }
      if (!Array.isArray(x)) fail();
      return { t, v: (x as unknown[]).map((e) => decodeTyped(t.elem!, e, path)) };
    case 'map':
      if (jsonKind(x) !== 'object') fail();
      return { t, v: new Map(Object.entries(x as Record<string, unknown>).map(([k, e]) => [k, decodeTyped(t.elem!, e, path)])) };
    case 'struct': {
      if (jsonKind(x) !== 'object') fail();
      const obj = x as Record<string, unknown>;
      const rec: Record<string, Value> = {};
      for (const fld of t.fields ?? []) {
        const [name = ''] = (fld.json ?? '').split(',');
        if (name === '-') rec[fld.name] = zeroOf(fld.type);
        else if (fld.embedded && name === '') rec[fld.name] = decodeTyped(fld.type, obj, path);
        else {
          const key = name || fld.name;
          const hit = key in obj ? key : Object.keys(obj).find((k) => k.toLowerCase() === key.toLowerCase());
          const sub = `${path ? path + '.' : ''}${key}`;
          rec[fld.name] = hit === undefined ? zeroOf(fld.type) : decodeTyped(fld.type, obj[hit], sub);
        }
      }
      return { t, v: rec };
    }
    default:
      return fail();
  }
}

// ---------------------------------------------------------------- unstructured.Unstructured

function nested(obj: Value, fields: string[]): Value | undefined {
  let cur: Value | undefined = obj;
  for (const k of fields) {
    if (!cur || cur.t !== T_MAP_ANY || cur.v === null) return undefined;
    cur = asMap(cur).get(k);
  }
  return cur;
}

const objectOf = (recv: Value): Value => asStruct(recv)['Object']!;

function nestedString(recv: Value, ...fields: string[]): string {
  const v = nested(objectOf(recv), fields);
  return v?.t === T.string ? asStr(v) : '';
}

function nestedStringMap(recv: Value, ...fields: string[]): Value {
  const v = nested(objectOf(recv), fields);
  if (!v || v.t !== T_MAP_ANY || v.v === null) return { t: T_MAP_STRING, v: null };
  const m = asMap(v);
  if ([...m.values()].some((e) => e.t !== T.string)) return { t: T_MAP_STRING, v: null };
  return { t: T_MAP_STRING, v: new Map([...m].map(([k, e]) => [k, e])) };
}

function nestedStringSlice(recv: Value, ...fields: string[]): Value {
  const v = nested(objectOf(recv), fields);
  if (!v || v.t.kind !== 'slice' || v.v === null) return { t: T_SLICE_STRING, v: null };
  const items = v.v as Value[];
  if (items.some((e) => e.t !== T.string)) return { t: T_SLICE_STRING, v: null };
  return { t: T_SLICE_STRING, v: items };
}

const UNSTRUCTURED_METHODS = new Map<string, Method>([
  ['GetName', getter(T.string, (r) => str(nestedString(r, 'metadata', 'name')))],
  ['GetNamespace', getter(T.string, (r) => str(nestedString(r, 'metadata', 'namespace')))],
  ['GetGenerateName', getter(T.string, (r) => str(nestedString(r, 'metadata', 'generateName')))],
  ['GetResourceVersion', getter(T.string, (r) => str(nestedString(r, 'metadata', 'resourceVersion')))],
  ['GetSelfLink', getter(T.string, (r) => str(nestedString(r, 'metadata', 'selfLink')))],
  ['GetClusterName', getter(T.string, (r) => str(nestedString(r, 'metadata', 'clusterName')))],
  ['GetKind', getter(T.string, (r) => str(nestedString(r, 'kind')))],
  ['GetAPIVersion', getter(T.string, (r) => str(nestedString(r, 'apiVersion')))],
  ['GetUID', getter(UID, (r) => ({ t: UID, v: nestedString(r, 'metadata', 'uid') }))],
  ['GetLabels', getter(T_MAP_STRING, (r) => nestedStringMap(r, 'metadata', 'labels'))],
  ['GetAnnotations', getter(T_MAP_STRING, (r) => nestedStringMap(r, 'metadata', 'annotations'))],
  ['GetFinalizers', getter(T_SLICE_STRING, (r) => nestedStringSlice(r, 'metadata', 'finalizers'))],
  [
    'GetGeneration',
    getter(T.int64, (r) => {
      const v = nested(objectOf(r), ['metadata', 'generation']);
      return v?.t === T.int64 ? v : int64(0);
    }),
  ],
  ['IsList', getter(T.bool, (r) => bool(nested(objectOf(r), ['items'])?.t.kind === 'slice'))],
  ['UnstructuredContent', getter(T_MAP_ANY, (r) => objectOf(r))],
]);

const UNSTRUCTURED: GoType = {
  ...struct('unstructured.Unstructured', [f('Object', T_MAP_ANY, '')], UNSTRUCTURED_METHODS),
  marshalJSON: (v) => marshalJSON(objectOf(v)),
};

/** An *unstructured.Unstructured over a JSON object. */
export function unstructured(obj: Record<string, unknown>): Value {
  const m = fromJSON(obj);
  return { t: ptrTo(UNSTRUCTURED), v: { t: UNSTRUCTURED, v: { Object: m } } };
}

/** A *v1alpha1.Cluster decoded from its JSON (API) form. */
export function cluster(obj: Record<string, unknown>): Value {
  return { t: CLUSTER_PTR, v: decodeTyped(CLUSTER, obj, 'Cluster') };
}

export interface TemplateDataInput {
  object?: Record<string, unknown> | null;
  cluster?: Record<string, unknown> | null;
  localCluster?: Record<string, unknown> | null;
}

/**
 * The data upstream renders override templates with: a map with Object (unstructured),
 * Cluster and LocalCluster (typed Cluster). Absent inputs leave their key out.
 */
export function templateData(input: TemplateDataInput): Value {
  const m = new Map<string, Value>();
  if (input.object) m.set('Object', unstructured(input.object));
  if (input.cluster) m.set('Cluster', cluster(input.cluster));
  if (input.localCluster) m.set('LocalCluster', cluster(input.localCluster));
  return anyMap(m);
}

