// The typed client of the service: openapi-fetch calls checked against the types `npm run client` generates.
//   const wms = wmsClient('http://127.0.0.1:8080', process.env.WMS_KEY!);
//   const { data, error } = await wms.GET('/api/v1/items/{id}', { params: { path: { id } } });
import createClient from 'openapi-fetch';
import type { paths } from './wms-api.d.ts';

export type { paths };

export function wmsClient(baseUrl: string, apiKey: string) {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });
}
