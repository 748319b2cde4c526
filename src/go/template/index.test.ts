import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseTemplate, renderTemplate, templateData, TemplateError } from './index.ts';

const data = templateData({
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns', labels: { app: 'web' } } },
  cluster: {
    metadata: { name: 'peer' },
    spec: { clusterID: 'id-1', authInfo: { secretRef: { name: 'sec' } } },
    status: { state: 'Ready', provider: 'amazon', locality: { region: 'eu-west-1' } },
  },
  localCluster: { metadata: { name: 'local' }, spec: { clusterID: 'id-0' } },
});

describe('renderTemplate', () => {
  it('renders the upstream example', () => {
    assert.equal(
      renderTemplate('{{ printf "%s-%s-%s" .Object.GetName .Cluster.GetName (trunc 4 (sha256sum .Cluster.GetName))}}', data),
      'cm-peer-' + createHash('sha256').update('peer').digest('hex').slice(0, 4),
    );
  });

  it('exposes Unstructured methods and its raw map, not metadata as a field', () => {
    assert.equal(renderTemplate('{{ .Object.GetNamespace }}/{{ .Object.Object.metadata.name }}/{{ .Object.GetLabels.app }}', data), 'ns/cm/web');
    assert.throws(() => renderTemplate('{{.Object.metadata}}', data), {
      message: 'template: :1:9: executing "" at <.Object.metadata>: can\'t evaluate field metadata in type interface {}',
    });
  });

  it('exposes the typed Cluster with Go field names', () => {
    assert.equal(
      renderTemplate('{{ .Cluster.Spec.ClusterID }} {{ .Cluster.Spec.AuthInfo.SecretRef.Name }} {{ .Cluster.Status.Provider }} {{ .Cluster.Status.Locality.Region }} {{ .Cluster.Name }}', data),
      'id-1 sec amazon eu-west-1 peer',
    );
  });

  it('treats a nil *Locality like Go', () => {
    assert.equal(renderTemplate('{{ .LocalCluster.Status.Locality }}', data), '<nil>');
    assert.throws(() => renderTemplate('{{ .LocalCluster.Status.Locality.Region }}', data), /nil pointer evaluating \*v1alpha1\.Locality\.Region/);
  });

  it('keeps int64 and float64 apart on plain JSON data', () => {
    assert.equal(renderTemplate('{{ printf "%d %T %T" .a .a .b }}', { a: 3, b: 3.5 }), '3 int64 float64');
    assert.equal(renderTemplate('{{ printf "%d" .b }}', { b: 3.5 }), '%!d(float64=3.5)');
  });

  it('prints <no value> for missing keys', () => {
    assert.equal(renderTemplate('{{ .nope }}', {}), '<no value>');
  });

  it('reports parse errors with the template name and line', () => {
    assert.throws(() => parseTemplate('a\n{{ if }}', 'x'), { name: 'TemplateError', message: 'template: x:2: missing value for if' });
    assert.throws(() => parseTemplate('{{ now }}'), { message: 'template: :1: function "now" not defined' });
  });

  it('refuses env and expandenv', () => {
    for (const fn of ['env', 'expandenv']) {
      assert.throws(() => parseTemplate(`{{ ${fn} "HOME" }}`), (e: unknown) => e instanceof TemplateError && /not available/.test(e.message));
    }
  });

  it('parses once and executes many times', () => {
    const t = parseTemplate('{{ range $k, $v := . }}{{ $k }}={{ $v }};{{ end }}');
    assert.equal(t.execute({ b: 1, a: 2 }), 'a=2;b=1;');
    assert.equal(t.execute({}), '');
  });
});
