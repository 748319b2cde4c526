// The HTTPS server of the Cluster validating webhook. Every replica serves, with
// the certificate shared through the Secret; a new certificate is swapped in without a restart.
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WELL_KNOWN } from '../../core/api/keys.ts';
import type { Cluster } from '../../core/api/types.ts';
import { admitCluster } from '../../core/registry/admission.ts';
import type { AdmissionDecision } from '../../core/registry/admission.ts';
import { counter, exponentialBuckets, histogram, silentLogger } from '../../kube/index.ts';
import type { Logger } from '../../kube/index.ts';
import { DEFAULT_SERVER_LIMITS, HttpError, allowMethods, guard, serverOptions } from '../../kube/http-server.ts';
import type { BodyReader, ServerLimits } from '../../kube/http-server.ts';
import { MalformedReviewError, clusterOf, decodeAdmissionReview, encodeAdmissionResponse, isClusterWrite } from './admission-review.ts';
import type { CertificatePair } from '../../kube/certificates.ts';

export const DEFAULT_WEBHOOK_PORT = 9443;
// A storable Cluster is at most etcd's request limit (1.5 MiB); an UPDATE carries two of them
// (object and oldObject) and the review around them. Anything longer is not from the API server.
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * What the webhook's clients may make it hold: at most 128 connections (about 60 KiB each), each
 * request's first 64 KiB of body on its own account (a Cluster's review is a few KiB), and 16 MiB
 * more across all requests (five reviews of the largest Clusters etcd stores): about 32 MiB held
 * at worst, far inside the chart's 640 MiB. Past that a request gets a 503 and a connection is
 * closed, which the API server counts as a failed call (failurePolicy decides).
 */
export const WEBHOOK_LIMITS: Readonly<ServerLimits> = {
  ...DEFAULT_SERVER_LIMITS,
  // Longer than the idle timeout of the API server's webhook client (90 s, Go's transport default), so it
  // closes idle sockets first and never sends a review on one we are closing.
  keepAliveTimeoutMs: 120_000,
  maxConnections: 128,
  maxBodyBytes: MAX_BODY_BYTES,
  ownBodyBytes: 64 * 1024,
  maxBufferedBytes: 16 * 1024 * 1024,
};

// In-flight reviews get this long to finish after the signal aborts.
const SHUTDOWN_GRACE_MS = 5_000;

// controller-runtime's webhook metric names, so upstream dashboards keep working.
const requestsTotal = counter({
  name: 'controller_runtime_webhook_requests_total',
  help: 'Total number of admission requests by HTTP status code.',
  labelNames: ['code', 'webhook'],
});
const latency = histogram({
  name: 'controller_runtime_webhook_latency_seconds',
  help: 'Histogram of the latency of processing admission requests',
  labelNames: ['webhook'],
  buckets: exponentialBuckets(0.001, 2, 12),
});

export interface WebhookServerOptions {
  port: number;
  /** Listen address; all interfaces when absent. */
  host?: string;
  certificates: CertificatePair;
  /** Every stored Cluster, from an informer cache. */
  clusters: () => readonly Cluster[];
  /** The kube-system UID of this cluster. */
  localClusterID: () => string;
  log?: Logger;
  /** Overrides of WEBHOOK_LIMITS. */
  limits?: Partial<ServerLimits>;
}

export class WebhookServer {
  private readonly opts: WebhookServerOptions;
  private readonly log: Logger;
  private readonly server: https.Server;
  private closed: Promise<void> = Promise.resolve();

  constructor(opts: WebhookServerOptions) {
    this.opts = opts;
    this.log = (opts.log ?? silentLogger).child({ component: 'webhook-server' });
    const limits = { ...WEBHOOK_LIMITS, ...opts.limits };
    this.server = https.createServer({ ...serverOptions(limits), ...tlsOptions(opts.certificates), minVersion: 'TLSv1.2' });
    guard(this.server, (req, res, url, readBody) => this.handle(req, res, url, readBody), { name: 'webhook', limits, log: this.log });
    // A TLS handshake that fails (an old caBundle on the client, a probe, a timeout) is the client's problem.
    this.server.on('tlsClientError', (err) => this.log.debug({ err: err.message }, 'TLS handshake failed'));
  }

  /** The bound port (useful with port 0); undefined before listening. */
  get port(): number | undefined {
    const addr = this.server.address();
    return addr && typeof addr === 'object' ? addr.port : undefined;
  }

  /** Listens; resolves once bound. The server closes when the signal aborts (see `stopped`). */
  async start(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.log.info({ port: this.port }, 'webhook server listening');
    this.closed = new Promise((resolve) => {
      const stop = (): void => {
        // Idle keep-alive sockets from the API server would hold close() open forever.
        this.server.closeIdleConnections();
        const force = setTimeout(() => this.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        this.server.close(() => {
          clearTimeout(force);
          this.log.info('webhook server stopped');
          resolve();
        });
      };
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
  }

  /** Resolves once the server has closed after its signal aborted. */
  stopped(): Promise<void> {
    return this.closed;
  }

  /** Serves new connections with this pair; established ones keep the one they negotiated. */
  setCertificates(pair: CertificatePair): void {
    this.server.setSecureContext(tlsOptions(pair));
  }

  private async handle(req: IncomingMessage, res: ServerResponse, url: URL, readBody: BodyReader): Promise<void> {
    const started = performance.now();
    const known = url.pathname === WELL_KNOWN.webhookPath;
    // Any path a client makes up must not become a metric series.
    const webhook = known ? url.pathname : 'unknown';
    res.once('finish', () => {
      requestsTotal.inc({ code: String(res.statusCode), webhook });
      latency.observe({ webhook }, (performance.now() - started) / 1000);
    });
    if (!known) throw new HttpError(404, 'not found');
    allowMethods(req, ['POST']);
    const body = (await readBody()).toString('utf8');
    let answer: ReturnType<typeof encodeAdmissionResponse>;
    try {
      answer = this.review(body);
    } catch (err) {
      throw err instanceof MalformedReviewError ? new HttpError(400, err.message) : err;
    }
    const text = JSON.stringify(answer);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  }

  private review(body: string): ReturnType<typeof encodeAdmissionResponse> {
    const request = decodeAdmissionReview(body);
    let decision: AdmissionDecision = { allowed: true };
    // Registered for Cluster CREATE/UPDATE only; anything else routed here is not ours to judge.
    if (isClusterWrite(request)) decision = admitCluster(clusterOf(request), this.opts.clusters(), this.opts.localClusterID());
    const log = { uid: request.uid, operation: request.operation, name: request.name, allowed: decision.allowed };
    if (decision.allowed) this.log.debug(log, 'admission request allowed');
    else this.log.info({ ...log, code: decision.code, reason: decision.message }, 'admission request denied');
    return encodeAdmissionResponse(request.uid, decision);
  }
}

function tlsOptions(pair: CertificatePair): { cert: string; key: string } {
  return { cert: pair.tlsCert, key: pair.tlsKey };
}
