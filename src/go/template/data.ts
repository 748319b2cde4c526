// The Go-compatible template data upstream passes to override templates:
//   map[string]interface{}{"Object": obj, "Cluster": *v1alpha1.Cluster, "LocalCluster": *v1alpha1.Cluster}
// where obj is the typed object of its kind when upstream's scheme knows it (see typed.ts), else
// an *unstructured.Unstructured, which exposes its accessor methods and the raw map as field
// Object.
//
// What upstream hands the template, read from its sync reconciler and controller-runtime v0.9.5:
// the object comes from the informer cache, whose reader sets apiVersion and kind on typed
// objects too (CacheReader.Get/List), and the template runs inside mutateObject after the
// annotation, label and GVK mutations and after the server-set metadata is cleared
// (generation, resourceVersion, uid, selfLink, creationTimestamp, finalizers, ownerReferences,
// managedFields), so it sees the copy being built, not the source as read.
import { marshalJSON } from './gojson.ts';
import { DecodeError, SPECIALS } from './specials.ts';
import { SCHEMA_GVK, decodeAs, getter, groupVersionKind, objectMetaType, typedObject, type GVK } from './typed.ts';
import {
  T,
  T_MAP_ANY,
  T_MAP_STRING,
  T_SLICE_ANY,
  T_SLICE_STRING,
  anyMap,
  asList,
  asMap,
  asStr,
  asStruct,
  asBool,
  bool,
  fromJSON,
  int64,
  ptrTo,
  str,
  zeroOf,
  type GoType,
  type Method,
  type Value,
} from './values.ts';

const UID = { ...T.string, name: 'types.UID' };

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

const TIME = SPECIALS.get('v1.Time')!.type;
const ZERO_TIME = zeroOf(TIME);

/** metav1.Time's UnmarshalQueryParameter: RFC 3339, the zero time when empty or invalid. */
function queryTime(s: string): Value {
  if (s === '' || s === 'null') return ZERO_TIME;
  try {
    return SPECIALS.get('v1.Time')!.decode(s, false, '');
  } catch (e) {
    if (e instanceof DecodeError) return ZERO_TIME;
    throw e;
  }
}

/** A getter of an ObjectMeta field's type, which comes from the lazily loaded type model. */
function lazyGetter(field: string, fn: (recv: Value, t: GoType) => Value): Method {
  const type = (): GoType => objectMetaType().fields!.find((f) => f.name === field)!.type;
  return getter(type, (recv) => fn(recv, type()));
}

/** Unstructured's extractOwnerReference: lenient, a wrongly typed field is left empty. */
function ownerReferences(recv: Value, t: GoType): Value {
  const list = nested(objectOf(recv), ['metadata', 'ownerReferences']);
  if (!list || list.t !== T_SLICE_ANY || list.v === null) return { t, v: null };
  const refs: Value[] = [];
  for (const item of asList(list)) {
    if (item.t !== T_MAP_ANY || item.v === null) return { t, v: null };
    const ref = zeroOf(t.elem!);
    const rec = asStruct(ref);
    const m = asMap(item);
    const text = (k: string): string => (m.get(k)?.t === T.string ? asStr(m.get(k)!) : '');
    const flag = (k: string): Value => ({ t: ptrTo(T.bool), v: m.get(k)?.t === T.bool ? m.get(k)! : null });
    for (const [field, key] of [['APIVersion', 'apiVersion'], ['Kind', 'kind'], ['Name', 'name'], ['UID', 'uid']]) rec[field!] = { t: rec[field!]!.t, v: text(key!) };
    rec['Controller'] = flag('controller');
    rec['BlockOwnerDeletion'] = flag('blockOwnerDeletion');
    refs.push(ref);
  }
  return { t, v: refs };
}

/** The plain JSON of an unstructured value. */
function plainJSON(v: Value): unknown {
  if (v.t === T_MAP_ANY) return v.v === null ? null : Object.fromEntries([...asMap(v)].map(([k, e]) => [k, plainJSON(e)]));
  if (v.t === T_SLICE_ANY) return v.v === null ? null : asList(v).map(plainJSON);
  if (v.t === T.int64) return Number(v.v);
  return v.v;
}

/** Unstructured's GetManagedFields: each entry converted to its type, nil if any does not fit. */
function managedFields(recv: Value, t: GoType): Value {
  const list = nested(objectOf(recv), ['metadata', 'managedFields']);
  if (!list || list.t !== T_SLICE_ANY || list.v === null) return { t, v: null };
  try {
    const entries = asList(list).map((item) => {
      if (item.t !== T_MAP_ANY || item.v === null) throw new DecodeError('a managedFields entry is not a map');
      return decodeAs(t.elem!, plainJSON(item));
    });
    return { t, v: entries };
  } catch (e) {
    if (e instanceof DecodeError) return { t, v: null };
    throw e;
  }
}

const UNSTRUCTURED: GoType = {
  kind: 'struct',
  name: 'unstructured.Unstructured',
  named: true,
  fields: [{ name: 'Object', type: T_MAP_ANY, json: '' }],
  marshalJSON: (v) => marshalJSON(objectOf(v)),
};

UNSTRUCTURED.methods = new Map<string, Method>([
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
  ['GetCreationTimestamp', getter(TIME, (r) => queryTime(nestedString(r, 'metadata', 'creationTimestamp')))],
  [
    'GetDeletionTimestamp',
    getter(ptrTo(TIME), (r) => {
      const t = queryTime(nestedString(r, 'metadata', 'deletionTimestamp'));
      return { t: ptrTo(TIME), v: asBool(TIME.methods!.get('IsZero')!.fn(t, [])) ? null : t };
    }),
  ],
  [
    'GetDeletionGracePeriodSeconds',
    getter(ptrTo(T.int64), (r) => {
      const v = nested(objectOf(r), ['metadata', 'deletionGracePeriodSeconds']);
      return { t: ptrTo(T.int64), v: v?.t === T.int64 ? v : null };
    }),
  ],
  ['GetOwnerReferences', lazyGetter('OwnerReferences', ownerReferences)],
  ['GetManagedFields', lazyGetter('ManagedFields', managedFields)],
  ['GroupVersionKind', getter(SCHEMA_GVK, (r) => groupVersionKind(nestedString(r, 'apiVersion'), nestedString(r, 'kind'), false))],
  // Go returns the object as a schema.ObjectKind; an interface result is not modelled, so
  // printing it shows the struct without Go's leading &.
  ['GetObjectKind', getter(ptrTo(UNSTRUCTURED), (r) => ({ t: ptrTo(UNSTRUCTURED), v: r }))],
  ['IsList', getter(T.bool, (r) => bool(nested(objectOf(r), ['items'])?.t.kind === 'slice'))],
  ['UnstructuredContent', getter(T_MAP_ANY, (r) => objectOf(r))],
]);

/** An *unstructured.Unstructured over a JSON object. */
export function unstructured(obj: Record<string, unknown>): Value {
  const m = fromJSON(obj);
  return { t: ptrTo(UNSTRUCTURED), v: { t: UNSTRUCTURED, v: { Object: m } } };
}

const CLUSTER_GVK: GVK = { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', kind: 'Cluster' };

/** A *v1alpha1.Cluster as upstream lists it from its cache (apiVersion and kind set). */
export function cluster(obj: Record<string, unknown>): Value {
  return typedObject(obj, CLUSTER_GVK, CLUSTER_GVK)!;
}

/**
 * The object upstream works on for a source of kind `gvk`: typed when its scheme knows the kind,
 * unstructured otherwise. Throws DecodeError when the JSON does not fit the type.
 */
export function objectValue(obj: Record<string, unknown>, gvk: GVK): Value {
  return typedObject(obj, gvk) ?? unstructured(obj);
}

export interface TemplateDataInput {
  object?: Record<string, unknown> | null;
  /**
   * The GVK of the source object, whose Go type the object has (a GVK mutation changes only its
   * apiVersion and kind). Without it the object is unstructured.
   */
  objectGVK?: GVK;
  cluster?: Record<string, unknown> | null;
  localCluster?: Record<string, unknown> | null;
}

/**
 * The data upstream renders override templates with: a map with Object and the typed Clusters
 * Cluster and LocalCluster. Absent inputs leave their key out.
 */
export function templateData(input: TemplateDataInput): Value {
  const m = new Map<string, Value>();
  if (input.object) m.set('Object', input.objectGVK ? objectValue(input.object, input.objectGVK) : unstructured(input.object));
  if (input.cluster) m.set('Cluster', cluster(input.cluster));
  if (input.localCluster) m.set('LocalCluster', cluster(input.localCluster));
  return anyMap(m);
}
