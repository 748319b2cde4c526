// go-patch v0.2.0 pointers and replace/remove ops, used by ResourceSyncRule overrides.
export { GoPatchError } from './errors.ts';
export { applyOps, type Op } from './ops.ts';
export { parsePointer, Pointer, type Modifier, type Token } from './pointer.ts';
