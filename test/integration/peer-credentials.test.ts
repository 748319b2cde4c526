// A hostile member writes the kubeconfig our controller reads for it: one that names our own
// token or key files, runs a command, uses an auth provider, skips TLS verification, talks plain
// http or through a proxy, or a Cluster whose endpoint is http. Each is refused with the key it
// used (never its value) and a Warning Event, nothing runs, and the attacker's servers (plain
// and TLS, trusted through the kubeconfig where that matters) are never even connected to.
// One cluster: the peer does not have to exist for any of this.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLUSTERS, SECRETS } from '../../src/core/api/resources.ts';
import type { Cluster } from '../../src/core/api/types.ts';
import type { RestClient } from '../../src/kube/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { adminClient, SANDBOX_NAMESPACE, startGroup } from '../../src/testbed/group.ts';
import { eventually } from '../support/eventually.ts';
import { RecordingServer } from '../support/recording-server.ts';
import { stopChecked } from '../support/security-checks.ts';
import {
  allEvents,
  clusterWhen,
  controllerKubeconfigPath,
  controllerLogs,
  credentialsSecret,
  deleteAll,
  kubeconfigText,
  peerCluster,
  readyOf,
  warningEventFor,
} from '../support/registry.ts';

/** What one attack has to work with: its own servers, a unique marker, and files worth stealing. */
interface Attack {
  /** Unique to this attack: its inline token and part of every value it sends, so any echo is found. */
  readonly marker: string;
  readonly tls: RecordingServer;
  readonly plain: RecordingServer;
  /** A file holding the attacker's CA, so a kubeconfig naming it would make its TLS server trusted. */
  readonly caFile: string;
  /** Created by the exec plugin if it ever ran. */
  readonly execRan: string;
}

interface Case {
  readonly slug: string;
  readonly title: string;
  /** The refusal names the key it refused. */
  readonly says: RegExp;
  readonly kubeconfig: (a: Attack) => string;
  /** A spec.kubernetesApiEndpoints[].serverAddress for the Cluster. */
  readonly endpoint?: (a: Attack) => string;
  /** The refused values, which must never surface. */
  readonly values: (a: Attack) => string[];
}

const b64 = (text: string): string => Buffer.from(text).toString('base64');
/** The attacker's TLS server, trusted through inline CA data: only our own checks stand in the way. */
const trusted = (a: Attack): Record<string, unknown> => ({ server: a.tls.url, 'certificate-authority-data': b64(a.tls.caPem ?? '') });

describe('peer kubeconfigs written by a hostile member (1 cluster)', () => {
  let sandbox: Sandbox;
  let admin: RestClient;
  let control: RecordingServer;
  let controllerToken: string;
  /** Files on our side an attacker would like us to read. */
  const stolen = { token: '', kubeconfig: '', adminTokens: '', servingCert: '', signingKey: '' };
  let attackDir: string;

  before(async () => {
    sandbox = await startGroup({ clusters: 1 });
    admin = await adminClient(sandbox.cluster('cluster1'));
    control = await RecordingServer.start({ tls: true });
    stolen.kubeconfig = controllerKubeconfigPath(sandbox, 'cluster1');
    controllerToken = /token: (\S+)/.exec(readFileSync(stolen.kubeconfig, 'utf8'))?.[1] ?? assert.fail('the controller kubeconfig has no token');
    attackDir = join(sandbox.dir, 'attack');
    mkdirSync(attackDir, { recursive: true });
    // Our ServiceAccount token as a file, as a pod has it.
    stolen.token = join(attackDir, 'controller.token');
    writeFileSync(stolen.token, controllerToken, { mode: 0o600 });
    const clusterDir = join(sandbox.dir, 'cluster1');
    stolen.adminTokens = join(clusterDir, 'tokens.csv');
    stolen.servingCert = join(clusterDir, 'apiserver.crt');
    stolen.signingKey = join(clusterDir, 'sa.key');
  });
  after(async () => {
    admin?.close();
    await control?.stop();
    // With the checks every group gets: what the controllers sent and logged, what the readers may do.
    if (sandbox) await stopChecked(sandbox);
  });

  const CASES: readonly Case[] = [
    {
      slug: 'token-file',
      title: 'token-file naming our ServiceAccount token',
      says: /users\[0\]\.user\.token-file is not allowed in a peer kubeconfig/,
      kubeconfig: (a) => kubeconfigText(trusted(a), { 'token-file': stolen.token }),
      values: () => [stolen.token],
    },
    {
      slug: 'token-file-kubeconfig',
      title: "token-file naming the controller's own kubeconfig",
      says: /users\[0\]\.user\.token-file is not allowed/,
      kubeconfig: (a) => kubeconfigText(trusted(a), { 'token-file': stolen.kubeconfig }),
      values: () => [stolen.kubeconfig],
    },
    {
      slug: 'tokenfile',
      title: "tokenFile (client-node's spelling) naming the admin token file",
      says: /users\[0\]\.user\.tokenFile is not allowed/,
      kubeconfig: (a) => kubeconfigText(trusted(a), { tokenFile: stolen.adminTokens }),
      values: () => [stolen.adminTokens],
    },
    {
      slug: 'client-certificate',
      title: 'client-certificate naming a file',
      says: /users\[0\]\.user\.client-certificate is not allowed/,
      kubeconfig: (a) => kubeconfigText(trusted(a), { 'client-certificate': stolen.servingCert }),
      values: () => [stolen.servingCert],
    },
    {
      slug: 'client-key',
      title: 'client-key naming the ServiceAccount signing key',
      says: /users\[0\]\.user\.client-key is not allowed/,
      kubeconfig: (a) => kubeconfigText(trusted(a), { 'client-key': stolen.signingKey }),
      values: () => [stolen.signingKey],
    },
    {
      slug: 'certificate-authority',
      title: "certificate-authority naming a file (the attacker's CA)",
      says: /clusters\[0\]\.cluster\.certificate-authority is not allowed/,
      kubeconfig: (a) => kubeconfigText({ server: a.tls.url, 'certificate-authority': a.caFile }, { token: a.marker }),
      values: (a) => [a.caFile],
    },
    {
      slug: 'exec',
      title: 'an exec plugin that would create a marker file',
      says: /users\[0\]\.user\.exec is not allowed/,
      kubeconfig: (a) =>
        kubeconfigText(trusted(a), {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: '/bin/sh',
            args: ['-c', `touch ${a.execRan}; printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${a.marker}"}}'`],
            interactiveMode: 'Never',
          },
        }),
      values: (a) => [a.execRan],
    },
    {
      slug: 'auth-provider',
      title: 'an auth provider (OIDC) with the attacker as issuer',
      says: /users\[0\]\.user\.auth-provider is not allowed/,
      kubeconfig: (a) => kubeconfigText(trusted(a), { 'auth-provider': { name: 'oidc', config: { 'idp-issuer-url': `${a.tls.url}/${a.marker}`, 'client-id': a.marker, 'id-token': a.marker } } }),
      values: (a) => [`${a.tls.url}/${a.marker}`],
    },
    {
      slug: 'insecure',
      title: 'insecure-skip-tls-verify against an untrusted server',
      says: /clusters\[0\]\.cluster\.insecure-skip-tls-verify is not allowed/,
      kubeconfig: (a) => kubeconfigText({ server: a.tls.url, 'insecure-skip-tls-verify': true }, { token: a.marker }),
      values: () => [],
    },
    {
      slug: 'http-server',
      title: 'an http:// server',
      says: /clusters\[0\]\.cluster\.server must be an https URL/,
      kubeconfig: (a) => kubeconfigText({ server: `${a.plain.url}/${a.marker}` }, { token: a.marker }),
      values: (a) => [`${a.plain.url}/${a.marker}`],
    },
    {
      slug: 'proxy-url',
      title: 'a proxy-url',
      says: /clusters\[0\]\.cluster\.proxy-url is not allowed/,
      kubeconfig: (a) => kubeconfigText({ ...trusted(a), 'proxy-url': `${a.plain.url}/${a.marker}` }, { token: a.marker }),
      values: (a) => [`${a.plain.url}/${a.marker}`],
    },
    {
      slug: 'http-endpoint',
      title: 'an acceptable kubeconfig, but the Cluster names an http:// endpoint',
      says: /spec\.kubernetesApiEndpoints\[\]\.serverAddress must be an https URL/,
      kubeconfig: (a) => kubeconfigText(trusted(a), { token: a.marker }),
      endpoint: (a) => `${a.plain.url}/${a.marker}`,
      values: (a) => [`${a.plain.url}/${a.marker}`],
    },
  ];

  /** Runs `fn` with fresh attacker servers and files, stopping the servers whatever happens. */
  async function withAttack(fn: (a: Attack) => Promise<void>): Promise<void> {
    const marker = `mark${randomUUID().replaceAll('-', '')}`;
    const servers: RecordingServer[] = [];
    try {
      const tls = await RecordingServer.start({ tls: true });
      servers.push(tls);
      const plain = await RecordingServer.start({ tls: false });
      servers.push(plain);
      const caFile = join(attackDir, `${marker}-ca.crt`);
      writeFileSync(caFile, tls.caPem ?? '');
      await fn({ marker, tls, plain, caFile, execRan: join(attackDir, `${marker}-exec-ran`) });
    } finally {
      for (const s of servers) await s.stop();
    }
  }

  /**
   * A later peer with acceptable credentials, pointed at a server of ours: once its probe has
   * arrived there, the controller has got past the point where an earlier Cluster's connection
   * would have been made. Its requests carry its own inline token and nothing else.
   */
  async function controlProbe(): Promise<void> {
    const name = `control-${randomUUID().slice(0, 8)}`;
    const token = `control${randomUUID().replaceAll('-', '')}`;
    try {
      await admin.create(SECRETS, SANDBOX_NAMESPACE, credentialsSecret(name, { kubeconfig: kubeconfigText({ server: control.url, 'certificate-authority-data': b64(control.caPem ?? '') }, { token }) }));
      await admin.create(CLUSTERS, undefined, peerCluster(name, { clusterID: randomUUID() }, name));
      await eventually(`the probe of ${name} to reach the control server`, () => control.requests.some((r) => r.authorization === `Bearer ${token}`));
    } finally {
      await deleteAll(admin, [{ kind: 'Cluster', name }, { kind: 'Secret', name }]);
    }
    assert.deepEqual(
      control.requests.filter((r) => r.authorization !== undefined && !r.authorization.startsWith('Bearer control')),
      [],
      'a peer connection sent something other than its own inline token',
    );
  }

  /** None of `values` appears in the Cluster's status, any Event or any controller log. */
  async function assertNeverSurfaced(name: string, values: readonly string[]): Promise<void> {
    const status = JSON.stringify((await admin.get<Cluster>(CLUSTERS, undefined, name)).status ?? {});
    const events = JSON.stringify(await allEvents(admin));
    const logs = controllerLogs(sandbox);
    assert.ok(logs.size > 0, 'no controller log');
    for (const v of values) {
      assert.ok(!status.includes(v), `the Cluster status shows ${v}`);
      assert.ok(!events.includes(v), `an Event shows ${v}`);
      for (const [file, text] of logs) assert.ok(!text.includes(v), `${file} shows ${v}`);
    }
  }

  for (const c of CASES) {
    it(`refuses ${c.title}: InvalidAuthInfo naming the key, a Warning Event, and no connection to the attacker`, () =>
      withAttack(async (a) => {
        const name = `attack-${c.slug}`;
        try {
          await admin.create(SECRETS, SANDBOX_NAMESPACE, credentialsSecret(name, { kubeconfig: c.kubeconfig(a) }));
          const endpoint = c.endpoint?.(a);
          await admin.create(CLUSTERS, undefined, peerCluster(name, { clusterID: randomUUID(), ...(endpoint ? { kubernetesApiEndpoints: [{ serverAddress: endpoint }] } : {}) }, name));
          const refused = await clusterWhen(admin, name, 'to be InvalidAuthInfo', (x) => x.status?.state === 'InvalidAuthInfo');
          const message = refused.status?.message ?? '';
          assert.match(message, new RegExp(`^invalid kubeconfig in Secret ${SANDBOX_NAMESPACE}/${name}: `));
          assert.match(message, c.says);
          assert.equal(readyOf(refused)?.status, 'False');
          assert.equal(readyOf(refused)?.message, message);
          await warningEventFor(admin, name, c.says);

          await controlProbe();
          assert.equal(a.tls.connections, 0, "the attacker's TLS server was connected to");
          assert.equal(a.plain.connections, 0, "the attacker's plain server was connected to");
          assert.deepEqual([...a.tls.requests, ...a.plain.requests], []);
          assert.equal(existsSync(a.execRan), false, 'the exec plugin ran');
          await assertNeverSurfaced(name, [...c.values(a), a.marker, controllerToken]);
        } finally {
          await deleteAll(admin, [{ kind: 'Cluster', name }, { kind: 'Secret', name }]);
        }
      }),
    );
  }
});
