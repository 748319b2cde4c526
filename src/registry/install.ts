// Installs the registry into a cluster: CRDs, the controller namespace and RBAC (deploy/), applied
// with server-side apply so a re-install converges instead of failing on what exists.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { CUSTOM_RESOURCE_DEFINITIONS, crdEstablished } from '../core/api/resources.ts';
import type { KubeObject } from '../core/api/types.ts';
import { Discovery, parseApiVersion, sleep, type ObjectClient } from '../kube/index.ts';

const DEPLOY_DIR = fileURLToPath(new URL('../../deploy/', import.meta.url));
const FIELD_MANAGER = 'cluster-registry-install';

/** Where each set of manifests lives under deploy/: the CRDs are the Helm chart's. */
const MANIFEST_DIRS = { crds: 'charts/cluster-registry/crds', manifests: 'manifests', compat: 'compat' } as const;

/** Every object of the YAML files of one set under deploy/, in file order. */
export function deployManifests(set: keyof typeof MANIFEST_DIRS): KubeObject[] {
  const dir = `${DEPLOY_DIR}${MANIFEST_DIRS[set]}/`;
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) => parseAllDocuments(readFileSync(dir + f, 'utf8')).map((d) => d.toJS() as KubeObject | null))
    .filter((o): o is KubeObject => !!o);
}

/** Server-side applies objects in order (kinds resolved by discovery, so CRDs applied earlier are found). */
export async function applyObjects(rest: ObjectClient, objects: readonly KubeObject[], signal?: AbortSignal): Promise<void> {
  const discovery = new Discovery(rest);
  for (const obj of objects) {
    const { group, version } = parseApiVersion(obj.apiVersion ?? '');
    const res = await discovery.resourceFor({ group, version, kind: obj.kind ?? '' });
    const ns = res.namespaced ? obj.metadata.namespace : undefined;
    await rest.apply(res, ns, obj, { fieldManager: FIELD_MANAGER, force: true, ...(signal ? { signal } : {}) });
  }
}

/** Waits until every CRD given is Established (its resources are served). */
async function waitEstablished(rest: ObjectClient, crds: readonly KubeObject[], signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (const crd of crds) {
    for (;;) {
      if (crdEstablished(await rest.get(CUSTOM_RESOURCE_DEFINITIONS, undefined, crd.metadata.name ?? '', signal ? { signal } : {}))) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name ?? ''} not established after 60s`);
      await sleep(200, signal);
    }
  }
}

export interface InstallOptions {
  /** Members running upstream's Go controller read this cluster: widen the reader as they need (deploy/compat). */
  readonly upstreamPeers?: boolean;
}

/** CRDs first (and waited for), then namespace and RBAC. */
export async function installRegistry(rest: ObjectClient, signal?: AbortSignal, opts: InstallOptions = {}): Promise<void> {
  const crds = deployManifests('crds');
  await applyObjects(rest, crds, signal);
  await waitEstablished(rest, crds, signal);
  await applyObjects(rest, [...deployManifests('manifests'), ...(opts.upstreamPeers ? deployManifests('compat') : [])], signal);
}
