import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configurationPatch, requiredNamesFor } from './configuration.ts';
import type { ValidatingWebhookConfiguration } from './configuration.ts';

function config(webhooks: ValidatingWebhookConfiguration['webhooks']): ValidatingWebhookConfiguration {
  return { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'cluster-validator-webhook', resourceVersion: '42' }, webhooks };
}

describe('webhook configuration', () => {
  it('requires the service DNS names and the URL hosts of every entry', () => {
    const names = requiredNamesFor(
      config([
        { name: 'a', clientConfig: { service: { name: 'cluster-registry', namespace: 'cluster-registry' } } },
        { name: 'b', clientConfig: { url: 'https://127.0.0.1:9443/validate-cluster' } },
        { name: 'c', clientConfig: { url: 'https://webhook.example.com/validate-cluster' } },
        { name: 'd', clientConfig: { url: 'https://[::1]:9443/validate-cluster' } },
      ]),
    );
    assert.deepEqual(names, {
      dnsNames: ['cluster-registry.cluster-registry.svc', 'cluster-registry.cluster-registry.svc.cluster.local', 'webhook.example.com'],
      ipAddresses: ['127.0.0.1', '::1'],
    });
    assert.deepEqual(requiredNamesFor(undefined), { dnsNames: [], ipAddresses: [] });
  });

  it('patches only caBundle and failurePolicy of each entry, behind a resourceVersion test', () => {
    const current = config([
      { name: 'a', clientConfig: { url: 'https://127.0.0.1:1/x', caBundle: 'old' }, failurePolicy: 'Ignore', sideEffects: 'None' },
      { name: 'b', clientConfig: { url: 'https://127.0.0.1:2/x', caBundle: 'new' }, failurePolicy: 'Fail' },
    ]);
    assert.deepEqual(configurationPatch(current, { caBundle: 'new', failurePolicy: 'Fail' }), [
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: 'new' },
      { op: 'add', path: '/webhooks/0/failurePolicy', value: 'Fail' },
    ]);
  });

  it('leaves caBundle alone when none is wanted, and answers undefined when nothing differs', () => {
    const current = config([{ name: 'a', clientConfig: { url: 'https://127.0.0.1:1/x', caBundle: 'x' }, failurePolicy: 'Fail' }]);
    assert.deepEqual(configurationPatch(current, { failurePolicy: 'Ignore' }), [
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/webhooks/0/failurePolicy', value: 'Ignore' },
    ]);
    assert.equal(configurationPatch(current, { caBundle: 'x', failurePolicy: 'Fail' }), undefined);
    assert.equal(configurationPatch(config(undefined), { caBundle: 'x', failurePolicy: 'Fail' }), undefined);
  });
});
