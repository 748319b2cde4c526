import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderTemplate, templateData } from './index.ts';
import { DecodeError, typedJSON, typedObject } from './typed.ts';

const SECRET = { version: 'v1', kind: 'Secret' };
const CLUSTER = { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', kind: 'Cluster' };

const render = (template: string, object: Record<string, unknown>, gvk: { group?: string; version: string; kind: string }): string =>
  renderTemplate(template, templateData({ object, objectGVK: gvk }));

describe('typed objects', () => {
  it('knows the kinds of upstream scheme only', () => {
    assert.equal(typedObject({}, { group: 'example.com', version: 'v1', kind: 'Widget' }), undefined);
    assert.equal(typedObject({}, SECRET)?.t.name, '*v1.Secret');
    assert.equal(typedObject({}, CLUSTER)?.t.name, '*v1alpha1.Cluster');
    assert.equal(typedJSON({ a: 1 }, { version: 'v1', kind: 'Nope' }), undefined);
  });

  it('matches JSON keys case-sensitively and drops unknown ones, like the informer', () => {
    const json = typedJSON({ apiVersion: 'v1', kind: 'Secret', Data: { a: 'eA==' }, type: 'T', extra: 1 }, SECRET);
    assert.equal(json, '{"kind":"Secret","apiVersion":"v1","metadata":{"creationTimestamp":null},"type":"T"}');
  });

  it('sets apiVersion and kind from the GVK, as the cache reader does', () => {
    assert.match(typedJSON({ metadata: { name: 'x' } }, SECRET)!, /^{"kind":"Secret","apiVersion":"v1",/);
  });

  it('refuses JSON that does not fit the Go type', () => {
    assert.throws(() => typedObject({ data: { a: 1 } }, SECRET), DecodeError);
    assert.throws(() => typedObject({ data: { a: 'not base64!' } }, SECRET), DecodeError);
    assert.throws(() => typedObject({ metadata: { creationTimestamp: 'yesterday' } }, SECRET), DecodeError);
    assert.equal(typedJSON({ data: { a: 1 } }, SECRET), 'null', 'matches no content');
  });

  it('gives built-in kinds what their protobuf round trip gives (empty lists and maps are nil)', () => {
    assert.equal(render('{{ printf "%#v %#v" .Object.Finalizers .Object.Data }}', { metadata: { finalizers: [] }, data: {} }, SECRET), '[]string(nil) map[string][]uint8(nil)');
    assert.equal(render('{{ printf "%#v" .Object.Data }}', { data: { a: null } }, SECRET), 'map[string][]uint8{"a":[]uint8{}}');
    assert.equal(render('{{ .Object.CreationTimestamp }}', { metadata: { creationTimestamp: '2021-03-04T05:06:07.5Z' } }, SECRET), '2021-03-04 05:06:07 +0000 UTC');
    // Cluster is a custom resource, read as JSON
    assert.equal(render('{{ printf "%#v" .Object.Finalizers }}|{{ .Object.CreationTimestamp }}', { metadata: { finalizers: [], creationTimestamp: '2021-03-04T05:06:07.5Z' } }, CLUSTER), '[]string{}|2021-03-04 05:06:07.5 +0000 UTC');
  });

  it('re-reads quantities from their canonical form', () => {
    const pvc = { version: 'v1', kind: 'PersistentVolumeClaim' };
    const requests = (storage: string): Record<string, unknown> => ({ spec: { resources: { requests: { storage } } } });
    const printed = '{{ range $k, $v := .Object.Spec.Resources.Requests }}{{ $v }}{{ end }}';
    // 1.5Gi goes through the inf.Dec path; its canonical 1536Mi parses to an int64 amount
    // whose string Go does not cache (1536 is a multiple of 8), 10Gi's it does.
    assert.equal(render(printed, requests('1.5Gi'), pvc), '{{1610612736 0} {<nil>}  BinarySI}');
    assert.equal(render(printed, requests('10Gi'), pvc), '{{10737418240 0} {<nil>} 10Gi BinarySI}');
  });

  it('exposes Go field names, promoted ObjectMeta methods and the generated String()', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', labels: { a: 'b' } }, data: { k: 'dmFs' }, type: 'Opaque' };
    assert.equal(render('{{ .Object.GetName }} {{ .Object.Name }} {{ .Object.ObjectMeta.Labels.a }} {{ .Object.Data.k }} {{ .Object.Type }}', secret, SECRET), 's s b [118 97 108] Opaque');
    assert.equal(render('{{ .Object.Data.k | toString }}', secret, SECRET), 'val');
    assert.match(render('{{ .Object }}', secret, SECRET), /^&Secret\{ObjectMeta:\{s {2}/);
    assert.throws(() => render('{{ .Object.data }}', secret, SECRET), /can't evaluate field data in type interface \{\}/);
  });

  it('keeps Unstructured for other kinds, with its accessors', () => {
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', creationTimestamp: '2021-03-04T05:06:07Z', ownerReferences: [{ kind: 'X', name: 'x', controller: true }] } };
    const gvk = { group: 'example.com', version: 'v1', kind: 'Widget' };
    assert.equal(
      render('{{ .Object.GetCreationTimestamp }}|{{ .Object.GetDeletionTimestamp }}|{{ .Object.GetOwnerReferences }}|{{ .Object.GroupVersionKind }}', widget, gvk),
      '2021-03-04 05:06:07 +0000 UTC|<nil>|[{ X x  0xc000010000 <nil>}]|example.com/v1, Kind=Widget',
    );
  });
});
