// What the bench sections drive the service with besides autocannon: an API client for multi-step flows, and a webhook
// receiver that counts what arrives.
import { createServer } from 'node:http';
import { Pool } from 'undici';

export type Call = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => Promise<{ data: any } | null>;

/**
 * Calls to /api/v1 on undici's own client (fetch() spends several times its CPU per request, and the bench shares the
 * machine's cores with the service and PostgreSQL). A body may be given as a JSON string; an answer >= 300 throws.
 */
export function apiClient(service: string, headers: Record<string, string>, connections: number): { call: Call; close(): Promise<void> } {
  const pool = new Pool(service, { connections });
  const call: Call = async (method, path, body) => {
    const response = await pool.request({
      path: `/api/v1${path}`, method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.body.text();
    if (response.statusCode >= 300) throw new Error(`${method} ${path}: ${response.statusCode} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) as { data: any } : null;
  };
  return { call, close: () => pool.close() };
}

/** A webhook receiver on a free local port answering every delivery with `status`; `received()` counts them. */
export async function countingReceiver(status: number) {
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: (path: string) => `http://127.0.0.1:${(server.address() as { port: number }).port}${path}`,
    received: () => received,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
