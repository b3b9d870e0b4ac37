import autocannon from 'autocannon';
import { orderBodies } from '../bench/orders.ts';
const bodies = await orderBodies('postgres://postgres@127.0.0.1:5432/wms_bench', 1000);
const key = (await import('node:fs')).readFileSync('/tmp/key', 'utf8').trim();
let n = 0;
const r = await autocannon({ url: 'http://127.0.0.1:18181', connections: 10, duration: Number(process.env.D ?? 8),
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  requests: [{ method: 'POST', path: '/api/v1/orders', setupRequest: (req: any) => ({ ...req, body: bodies[n++ % bodies.length] }) }] });
console.log('rps', Math.round(r.requests.average), 'p50', r.latency.p50, 'p99', r.latency.p99, 'non2xx', r.non2xx);
