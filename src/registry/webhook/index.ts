// The Cluster validating webhook as one component: every replica serves
// /validate-cluster with the certificate from the shared Secret and hot-reloads it; the leader
// keeps that certificate valid for every name the webhook configuration uses, keeps the
// configuration's caBundle on its CA with failurePolicy Fail, and sets Ignore when it steps down.
import type { Cluster } from '../../core/api/types.ts';
import { silentLogger, sleep } from '../../kube/index.ts';
import type { Informer, InformerFactory, KubeObject, Logger, ObjectClient } from '../../kube/index.ts';
import { CLUSTERS } from '../../core/api/resources.ts';
import { CertificateStore, secretNameFor } from './certificate-store.ts';
import { DEFAULT_VALIDITY_MS, generateCertificates, rotatedCaBundle, verifyCertificates } from '../../kube/certificates.ts';
import type { CertificatePair, RequiredNames } from '../../kube/certificates.ts';
import { VALIDATING_WEBHOOK_CONFIGURATIONS, WebhookConfiguration, requiredNamesFor } from './configuration.ts';
import type { ValidatingWebhookConfiguration } from './configuration.ts';
import { WebhookServer } from './server.ts';

export { secretNameFor } from './certificate-store.ts';

// core's object type has optional metadata; the runtime's cache always has it.
type CachedCluster = Cluster & KubeObject;

const DEFAULT_CHECK_INTERVAL_MS = 30_000;
// Between publishing a new CA and storing the certificate it signed: the API server's webhook
// informer must see the new caBundle before any replica starts serving the new certificate.
const ROTATION_SETTLE_MS = 2_000;
// The Ignore write on shutdown gets this long; the process is on its way out.
const SHUTDOWN_WRITE_TIMEOUT_MS = 10_000;

export interface ClusterValidatorWebhookOptions {
  rest: ObjectClient;
  /** This cluster's shared informer factory; the caller starts it. */
  informers: InformerFactory;
  /** The controller namespace, where the certificate Secret lives. */
  namespace: string;
  /** `--cluster-validator-webhook-name`: the ValidatingWebhookConfiguration to manage. */
  configurationName: string;
  /** `--cluster-validator-webhook-port`. */
  port: number;
  /** Listen address; all interfaces when absent. */
  host?: string;
  /** The kube-system UID of this cluster. */
  localClusterID: () => string;
  log?: Logger;
  /** How often the leader re-checks the certificate and the configuration. Default 30 s. */
  checkIntervalMs?: number;
  /** Lifetime of generated certificates. Default 1 year. */
  validityMs?: number;
  /** Renew when less than this is left. Default: a third of the certificate's lifetime. */
  renewalMarginMs?: number;
}

export class ClusterValidatorWebhook {
  private readonly opts: ClusterValidatorWebhookOptions;
  private readonly log: Logger;
  private readonly store: CertificateStore;
  private readonly configuration: WebhookConfiguration;
  private readonly configInformer: Informer<ValidatingWebhookConfiguration>;
  private readonly clusterInformer: Informer<CachedCluster>;
  private server: WebhookServer | undefined;
  private readonly serving = Promise.withResolvers<void>();
  private leadership: Promise<void> | undefined;

  constructor(opts: ClusterValidatorWebhookOptions) {
    this.opts = opts;
    this.log = (opts.log ?? silentLogger).child({ component: 'cluster-validator-webhook' });
    this.store = new CertificateStore({
      rest: opts.rest,
      informers: opts.informers,
      namespace: opts.namespace,
      secretName: secretNameFor(opts.configurationName),
      log: this.log,
    });
    this.configuration = new WebhookConfiguration({ rest: opts.rest, name: opts.configurationName, log: this.log });
    this.configInformer = opts.informers.forResource<ValidatingWebhookConfiguration>({
      ...VALIDATING_WEBHOOK_CONFIGURATIONS,
      fieldSelector: `metadata.name=${opts.configurationName}`,
    });
    this.clusterInformer = opts.informers.forResource<CachedCluster>({ ...CLUSTERS });
  }

  /** The port served on, once serving. */
  get port(): number | undefined {
    return this.server?.port;
  }

  /** Resolves once this replica serves admission requests. */
  ready(): Promise<void> {
    return this.serving.promise;
  }

  /**
   * Serves until the signal aborts. Returns after the leader duties (if this replica leads; their
   * signal should abort with this one) have set failurePolicy Ignore and the server has closed.
   */
  async start(signal: AbortSignal): Promise<void> {
    // Deciding on an empty Cluster cache would admit a duplicate of the local Cluster.
    const informers = [this.store, this.clusterInformer, this.configInformer];
    const synced = await Promise.all(informers.map((i) => i.waitForSync(signal)));
    if (!synced.every(Boolean)) return;

    // The names are a best first guess: the leader renews the pair if the configuration needs others.
    const generate = async (): Promise<CertificatePair> => this.generate(requiredNamesFor(await this.configuration.get(signal)));
    let pair: CertificatePair;
    try {
      pair = await this.store.ensure(generate, signal);
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
    // Closed only after the leader duties are done, so requests are answered until failurePolicy is Ignore.
    const serverStop = new AbortController();
    const server = new WebhookServer({
      port: this.opts.port,
      host: this.opts.host,
      certificates: pair,
      clusters: () => this.clusterInformer.store.list(),
      localClusterID: this.opts.localClusterID,
      log: this.log,
    });
    await server.start(serverStop.signal);
    this.server = server;
    let served = pair.tlsCert;
    const unsubscribe = this.store.onChange((next) => {
      if (!next || next.tlsCert === served) return;
      const verdict = verifyCertificates(next, { renewalMarginMs: 0 });
      if (!verdict.ok) {
        this.log.error({ reason: verdict.reason }, 'the webhook certificate Secret holds an unusable pair; still serving the previous one');
        return;
      }
      server.setCertificates(next);
      served = next.tlsCert;
      this.log.info({ notAfter: verdict.notAfter.toISOString() }, 'serving the webhook certificate from the updated Secret');
    });
    this.serving.resolve();

    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    unsubscribe();
    await this.leadership;
    serverStop.abort();
    await server.stopped();
  }

  /**
   * Leader duties until the signal aborts (pass it as LeaderElector's onStartedLeading). Resolves
   * after setting failurePolicy Ignore.
   */
  onStartedLeading(signal: AbortSignal): Promise<void> {
    this.leadership = this.lead(signal);
    return this.leadership;
  }

  private async lead(signal: AbortSignal): Promise<void> {
    // failurePolicy Fail only once this replica can answer.
    await Promise.race([this.serving.promise, new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))]);
    if (signal.aborted) return;
    this.log.info('leading: managing the webhook certificate and configuration');
    const trigger = new Trigger();
    const kick = (): void => trigger.kick();
    const unsubscribe = [this.store.onChange(kick), this.configInformer.addEventHandler({ onAdd: kick, onUpdate: kick, onDelete: kick })];
    const timer = setInterval(kick, this.opts.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS);
    const state = { configMissing: false };
    try {
      while (!signal.aborted) {
        try {
          await this.certify(signal, state);
        } catch (err) {
          if (!signal.aborted) this.log.error({ err }, 'managing the webhook certificate failed; retrying');
        }
        await trigger.wait(signal);
      }
    } finally {
      clearInterval(timer);
      for (const u of unsubscribe) u();
    }
    try {
      const result = await this.configuration.sync({ failurePolicy: 'Ignore' }, AbortSignal.timeout(SHUTDOWN_WRITE_TIMEOUT_MS));
      this.log.info({ result }, 'stepped down: webhook failurePolicy is Ignore');
    } catch (err) {
      this.log.error({ err }, 'setting the webhook failurePolicy to Ignore failed');
    }
  }

  /** One leader round: renew the stored pair if needed, then point the configuration at its CA. */
  private async certify(signal: AbortSignal, state: { configMissing: boolean }): Promise<void> {
    const config = await this.configuration.get(signal);
    if (!config) {
      if (!state.configMissing) {
        this.log.error(
          { validatingWebhookConfiguration: this.opts.configurationName },
          'the ValidatingWebhookConfiguration does not exist, so the API server does not call this webhook; retrying until it appears',
        );
      }
      state.configMissing = true;
      return;
    }
    if (state.configMissing) this.log.info('the ValidatingWebhookConfiguration appeared');
    state.configMissing = false;

    const names = requiredNamesFor(config);
    const stored = this.store.current();
    const verdict = stored ? verifyCertificates(stored, { names, renewalMarginMs: this.opts.renewalMarginMs }) : ({ ok: false, reason: 'the Secret is absent' } as const);
    if (!verdict.ok) this.log.info({ reason: verdict.reason, ...names }, 'renewing the webhook certificate');
    const pair = stored && verdict.ok ? stored : await this.renew(names, signal);
    await this.configuration.sync({ caBundle: caBundleOf(pair), failurePolicy: 'Fail' }, signal);
  }

  private async renew(names: RequiredNames, signal: AbortSignal): Promise<CertificatePair> {
    const fresh = await this.generate(names);
    fresh.caCert = rotatedCaBundle(fresh.caCert, this.store.lastKnown()?.caCert);
    // The API server must trust the new CA (next to the old one) before any replica serves it.
    await this.configuration.sync({ caBundle: caBundleOf(fresh), failurePolicy: 'Fail' }, signal);
    await sleep(ROTATION_SETTLE_MS, signal);
    if (signal.aborted) throw new Error('leadership ended during renewal');
    await this.store.replace(fresh, signal);
    return fresh;
  }

  private generate(names: RequiredNames): Promise<CertificatePair> {
    return generateCertificates({ ...names, validityMs: this.opts.validityMs ?? DEFAULT_VALIDITY_MS });
  }
}

function caBundleOf(pair: CertificatePair): string {
  return Buffer.from(pair.caCert, 'utf8').toString('base64');
}

/** Coalesces wake-ups: any number of kicks while a round runs cause exactly one more round. */
class Trigger {
  private pending = false;
  private wake: (() => void) | undefined;

  kick(): void {
    this.pending = true;
    this.wake?.();
  }

  async wait(signal: AbortSignal): Promise<void> {
    if (!this.pending && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          signal.removeEventListener('abort', done);
          this.wake = undefined;
          resolve();
        };
        this.wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
    this.pending = false;
  }
}
