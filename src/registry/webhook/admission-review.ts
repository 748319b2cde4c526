// admission.k8s.io/v1 AdmissionReview: decoding what the API server sends to /validate-cluster
// and encoding our answer. Pure; the server only moves bytes.
import { API_GROUP, KINDS } from '../../core/api/keys.ts';
import type { Cluster } from '../../core/api/types.ts';
import type { AdmissionDecision } from '../../core/registry/admission.ts';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
const ADMISSION_KIND = 'AdmissionReview';

export interface AdmissionRequest {
  uid: string;
  operation: string;
  /** Kind of the object in `object` (kind.group, kind.kind). */
  kind: { group: string; version: string; kind: string };
  name?: string;
  object?: unknown;
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: typeof ADMISSION_KIND;
  response: {
    uid: string;
    allowed: boolean;
    status?: { code: number; message: string };
  };
}

/** The input is not an AdmissionReview we can answer; the server replies 400 with this message. */
export class MalformedReviewError extends Error {
  override readonly name = 'MalformedReviewError';
}

/** Parses a request body. Throws MalformedReviewError when it is not a v1 AdmissionReview request. */
export function decodeAdmissionReview(body: string): AdmissionRequest {
  let review: unknown;
  try {
    review = JSON.parse(body);
  } catch {
    throw new MalformedReviewError('request body is not JSON');
  }
  if (!isRecord(review)) throw new MalformedReviewError('request body is not a JSON object');
  if (review.apiVersion !== ADMISSION_API_VERSION || review.kind !== ADMISSION_KIND) {
    throw new MalformedReviewError(`expected ${ADMISSION_API_VERSION} ${ADMISSION_KIND}, got ${describe(review.apiVersion)} ${describe(review.kind)}`);
  }
  const req = review.request;
  if (!isRecord(req)) throw new MalformedReviewError('AdmissionReview has no request');
  if (typeof req.uid !== 'string' || req.uid === '') throw new MalformedReviewError('request.uid is missing');
  if (typeof req.operation !== 'string') throw new MalformedReviewError('request.operation is missing');
  const kind = req.kind;
  if (!isRecord(kind) || typeof kind.kind !== 'string') throw new MalformedReviewError('request.kind is missing');
  return {
    uid: req.uid,
    operation: req.operation,
    kind: { group: typeof kind.group === 'string' ? kind.group : '', version: typeof kind.version === 'string' ? kind.version : '', kind: kind.kind },
    name: typeof req.name === 'string' ? req.name : undefined,
    object: req.object,
  };
}

/** Whether the request is a Cluster CREATE or UPDATE, the only ones the webhook judges. */
export function isClusterWrite(req: AdmissionRequest): boolean {
  return req.kind.group === API_GROUP && req.kind.kind === KINDS.cluster && (req.operation === 'CREATE' || req.operation === 'UPDATE');
}

/** The Cluster of a Cluster write; throws MalformedReviewError when the object is absent or not one. */
export function clusterOf(req: AdmissionRequest): Cluster {
  const obj = req.object;
  if (!isRecord(obj) || !isRecord(obj.metadata)) throw new MalformedReviewError('request.object is not a Kubernetes object');
  if (obj.spec !== undefined && !isRecord(obj.spec)) throw new MalformedReviewError('request.object.spec is not an object');
  // The API server validates these before admission; anything else did not come from it.
  for (const [field, v] of [['metadata.name', obj.metadata.name], ['spec.clusterID', isRecord(obj.spec) ? obj.spec.clusterID : undefined]] as const) {
    if (v !== undefined && typeof v !== 'string') throw new MalformedReviewError(`request.object.${field} is not a string`);
  }
  return obj as unknown as Cluster;
}

export function encodeAdmissionResponse(uid: string, decision: AdmissionDecision): AdmissionReviewResponse {
  const response: AdmissionReviewResponse['response'] = { uid, allowed: decision.allowed };
  if (!decision.allowed) response.status = { code: decision.code, message: decision.message };
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_KIND, response };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// Echoes only the type or a short string, never a whole value from the body.
function describe(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v.slice(0, 64)) : typeof v;
}
