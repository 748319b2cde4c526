// Where the Go-built tools live (tools/build.sh puts them there).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The package root: this file is src/sandbox/tools.ts or dist/sandbox/tools.js. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const TOOLS_BIN_DIR = fileURLToPath(new URL('../../.cache/tools/bin/', import.meta.url));

/**
 * `upstream-controller` is the Go controller we re-implement; `upstream-manifests` is a directory
 * (`crds/` generated from its API types, `chart/` its Helm chart), for the compatibility tests;
 * `sig-crds` a directory of SIG-Multicluster's CRDs (About API, cluster inventory); `istio-crds` a
 * directory holding Istio's CRDs (`crd-all.gen.yaml`).
 */
export type ToolName =
  | 'kubelet'
  | 'kube-scheduler'
  | 'kube-proxy'
  | 'etcd'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kubectl'
  | 'helm'
  | 'upstream-controller'
  | 'controller-gen'
  | 'upstream-manifests'
  | 'sig-crds'
  | 'istio-crds';

export function toolPath(name: ToolName): string {
  const path = TOOLS_BIN_DIR + name;
  if (!existsSync(path)) {
    throw new Error(`${name} is not built (expected at ${path}); run 'make tools' (tools/build.sh) first`);
  }
  return path;
}
