// A scripted API server for unit tests of the runtime: each list and each watch request gets the
// next of its steps (then an open response that says nothing), over a real socket, with a real
// RestClient in front of it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RestClient } from '../../src/kube/rest.ts';
import type { KubeObject } from '../../src/kube/types.ts';

/** One watch event, as a line of the stream. */
export const line = (type: string, object: object): string => `${JSON.stringify({ type, object })}\n`;

export type Step = (url: URL, res: http.ServerResponse) => void;

export async function scripted(steps: { list: Step[]; watch: Step[] }): Promise<{ rest: RestClient; urls: URL[]; close(): void }> {
  const urls: URL[] = [];
  let lists = 0;
  let watches = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    urls.push(url);
    const isWatch = url.searchParams.get('watch') === '1';
    const step = isWatch ? steps.watch[watches++] : steps.list[lists++];
    if (step) step(url, res);
    else res.writeHead(200).flushHeaders(); // then silence
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const rest = new RestClient({ server: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), tls: {}, authHeaders: async () => ({}), invalidate: () => undefined });
  return {
    rest,
    urls,
    close: () => {
      rest.close();
      server.closeAllConnections();
      server.close();
    },
  };
}

export const list = (rv: string, items: KubeObject[], cont?: string): Step => (_u, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: rv, continue: cont }, items }));
};
export const stream = (body: string): Step => (_u, res) => {
  res.writeHead(200);
  res.end(body);
};
