// Real local Kubernetes clusters for the demo and every integration test.
export { startSandbox, Sandbox, SandboxCluster, clusterNames, type SandboxOptions } from './sandbox.ts';
export { Component, ComponentError } from './component.ts';
export { tokenKubeconfig, type KubeconfigInput } from './kubeconfig.ts';
export { readState, statusOf, stopRecorded, type ComponentStatus, type SandboxState } from './state.ts';
export { TOOLS_BIN_DIR, PACKAGE_ROOT, toolPath } from './tools.ts';
