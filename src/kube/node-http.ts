// node:http, loaded through require(). Imported as an ES module, its namespace evaluates every
// export, including the lazy WebSocket and EventSource ones that load Node's bundled undici:
// about 8 MiB of resident memory that a controller never uses.
import { createRequire } from 'node:module';
import type * as Http from 'node:http';

export const http = createRequire(import.meta.url)('node:http') as typeof Http;
