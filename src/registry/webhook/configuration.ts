// The ValidatingWebhookConfiguration the leader keeps pointing at the current CA.
// Unlike upstream it never writes a whole stale copy back: it sends a JSON patch of
// exactly caBundle and failurePolicy, guarded by a resourceVersion test, built from a fresh GET.
import { isConflict, isInvalid, silentLogger } from '../../kube/index.ts';
import type { KubeObject, Logger, ResourceRef, ObjectClient } from '../../kube/index.ts';
import { requiredNamesOf } from '../../kube/certificates.ts';
import type { RequiredNames } from '../../kube/certificates.ts';

export const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceRef = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource: 'validatingwebhookconfigurations',
};

export type FailurePolicy = 'Fail' | 'Ignore';

export interface WebhookClientConfig {
  url?: string;
  service?: { name: string; namespace: string; path?: string; port?: number };
  /** Base64 of the PEM bundle. */
  caBundle?: string;
}

export interface ValidatingWebhook {
  name: string;
  clientConfig: WebhookClientConfig;
  failurePolicy?: FailurePolicy;
  [field: string]: unknown;
}

export interface ValidatingWebhookConfiguration extends KubeObject {
  webhooks?: ValidatingWebhook[];
}

/** What the leader wants on every webhook entry; an absent field is left alone. */
export interface DesiredClientState {
  caBundle?: string;
  failurePolicy: FailurePolicy;
}

export type JsonPatchOp = { op: 'test' | 'add'; path: string; value: unknown };

/**
 * The names the serving certificate must cover: `<svc>.<ns>.svc` and `<svc>.<ns>.svc.cluster.local`
 * for service references, and the host (DNS name or IP) of URL references.
 */
export function requiredNamesFor(config: ValidatingWebhookConfiguration | undefined): RequiredNames {
  const hosts: string[] = [];
  for (const webhook of config?.webhooks ?? []) {
    const { service, url } = webhook.clientConfig ?? {};
    if (service) hosts.push(`${service.name}.${service.namespace}.svc`, `${service.name}.${service.namespace}.svc.cluster.local`);
    if (url) {
      try {
        // URL keeps IPv6 literals bracketed.
        hosts.push(new URL(url).hostname.replace(/^\[(.*)\]$/, '$1'));
      } catch {
        // The API server validates clientConfig.url; an unparsable one cannot be called anyway.
      }
    }
  }
  return requiredNamesOf(hosts);
}

/** The JSON patch that brings every entry to `desired`, or undefined when nothing differs. */
export function configurationPatch(config: ValidatingWebhookConfiguration, desired: DesiredClientState): JsonPatchOp[] | undefined {
  const ops: JsonPatchOp[] = [];
  (config.webhooks ?? []).forEach((webhook, i) => {
    if (desired.caBundle !== undefined && webhook.clientConfig?.caBundle !== desired.caBundle) {
      ops.push({ op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: desired.caBundle });
    }
    if (webhook.failurePolicy !== desired.failurePolicy) ops.push({ op: 'add', path: `/webhooks/${i}/failurePolicy`, value: desired.failurePolicy });
  });
  if (ops.length === 0) return undefined;
  // Indexes are only meaningful for the version they were computed from.
  return [{ op: 'test', path: '/metadata/resourceVersion', value: config.metadata.resourceVersion ?? '' }, ...ops];
}

export type SyncResult = 'updated' | 'unchanged' | 'missing';

const MAX_ATTEMPTS = 5;

export class WebhookConfiguration {
  readonly name: string;
  private readonly rest: ObjectClient;
  private readonly log: Logger;

  constructor(opts: { rest: ObjectClient; name: string; log?: Logger }) {
    this.rest = opts.rest;
    this.name = opts.name;
    this.log = (opts.log ?? silentLogger).child({ validatingWebhookConfiguration: opts.name });
  }

  async get(signal?: AbortSignal): Promise<ValidatingWebhookConfiguration | undefined> {
    return this.rest.getIfExists<ValidatingWebhookConfiguration>(VALIDATING_WEBHOOK_CONFIGURATIONS, undefined, this.name, signal ? { signal } : {});
  }

  /** Brings every entry to `desired`; a concurrent writer makes it start over from a fresh read. */
  async sync(desired: DesiredClientState, signal?: AbortSignal): Promise<SyncResult> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.get(signal);
      if (!current) return 'missing';
      const patch = configurationPatch(current, desired);
      if (!patch) return 'unchanged';
      try {
        await this.rest.patch(VALIDATING_WEBHOOK_CONFIGURATIONS, undefined, this.name, 'json', patch, { signal });
        this.log.info({ failurePolicy: desired.failurePolicy, caBundleChanged: patch.some((op) => op.path.endsWith('/caBundle')) }, 'webhook configuration updated');
        return 'updated';
      } catch (err) {
        // A failed resourceVersion test answers 422 Unprocessable, like an invalid patch: only a
        // changed resourceVersion tells the two apart.
        if (!(isInvalid(err) || isConflict(err)) || attempt >= MAX_ATTEMPTS) throw err;
        const now = await this.get(signal);
        if (now && now.metadata.resourceVersion === current.metadata.resourceVersion) throw err;
        this.log.debug({ attempt }, 'webhook configuration changed meanwhile, retrying');
      }
    }
  }
}
