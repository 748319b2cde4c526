import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endpointCA, normalizeServerAddress, pickEndpoint } from './endpoints.ts';

const cluster = (eps: { clientNetwork?: string; serverAddress?: string; caBundle?: string }[]) => ({ spec: { clusterID: 'x', kubernetesApiEndpoints: eps } });

describe('pickEndpoint', () => {
  it('takes the first entry for the exact network', () => {
    const c = cluster([{ serverAddress: 'any1' }, { clientNetwork: 'net', serverAddress: 'n1' }, { clientNetwork: 'net', serverAddress: 'n2' }]);
    assert.equal(pickEndpoint(c, 'net')?.serverAddress, 'n1');
  });
  it('falls back to the last entry without a network', () => {
    const c = cluster([{ serverAddress: 'any1' }, { clientNetwork: 'other', serverAddress: 'o' }, { serverAddress: 'any2' }]);
    assert.equal(pickEndpoint(c, 'default')?.serverAddress, 'any2');
  });
  it('for the empty network takes the first entry without a network', () => {
    const c = cluster([{ clientNetwork: 'x', serverAddress: 'x' }, { serverAddress: 'any1' }, { serverAddress: 'any2' }]);
    assert.equal(pickEndpoint(c, '')?.serverAddress, 'any1');
  });
  it('gives nothing when no entry fits', () => {
    assert.equal(pickEndpoint(cluster([{ clientNetwork: 'x' }]), 'y'), undefined);
    assert.equal(pickEndpoint({ spec: { clusterID: 'x' } }, 'y'), undefined);
  });
});

describe('normalizeServerAddress', () => {
  const cases: [string, string][] = [
    ['1.2.3.4:6443', 'https://1.2.3.4:6443'],
    ['api.example.com', 'https://api.example.com'],
    ['//api.example.com:443', 'https://api.example.com'],
    ['http://x:8080', 'http://x:8080'],
    ['https://x/prefix', 'https://x/prefix'],
    ['[::1]:6443', 'https://[::1]:6443'],
  ];
  for (const [input, want] of cases) it(input, () => assert.equal(normalizeServerAddress(input), want));
});

describe('endpointCA', () => {
  it('decodes the base64 bundle', () => {
    assert.equal(endpointCA({ caBundle: Buffer.from('PEM').toString('base64') }), 'PEM');
    assert.equal(endpointCA({}), undefined);
  });
});
