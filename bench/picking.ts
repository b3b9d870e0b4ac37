// Pick, pack and ship targets of issue 13 on the bench data set: the full floor cycle of a 10-line order (start batch,
// pick 10 lines, complete, verify 10 lines, pack with the packing list PDF, ship) at >= 50 orders/s end to end, and
// the packing list PDF of a 100-line order in < 200 ms.
import { renderPackingList } from '../src/modules/documents/packing-list.ts';
import { apiClient, type Call } from './client.ts';
import type { CpuFigures, CpuMeter } from './cpu.ts';
import { orderBodies } from './orders.ts';

const ORDERS = Number(process.env.BENCH_PICK_ORDERS ?? 300);
// A service that has run all day has its statements planned on every connection and its code compiled: the first
// cycles warm a fresh instance up and are not counted.
const WARMUP_ORDERS = 50;
const WORKERS = Number(process.env.BENCH_PICK_WORKERS ?? 8);
const PDF_RUNS = 20;

export interface PickingRow {
  operation: string;
  value: number;
  unit: string;
  target: string;
  met: boolean;
  /** CPU per operation, where it was measured. */
  cpu?: CpuFigures | null;
}

/** `startCpu` starts counting the service's and PostgreSQL's CPU (a CpuMeter's start for the service's process). */
export async function measurePicking(
  service: string, headers: Record<string, string>, databaseUrl: string, startCpu: () => ReturnType<CpuMeter['start']>,
): Promise<PickingRow[]> {
  const { call, close } = apiClient(service, headers, WORKERS);
  // Released orders to work (entering and releasing them is not part of the floor's cycle).
  const bodies = await orderBodies(databaseUrl, WARMUP_ORDERS + ORDERS);
  const orders: string[] = [];
  for (const body of bodies) {
    const { data } = (await call('POST', '/orders', body))!;
    await call('POST', `/orders/${data.order.id}/release`);
    orders.push(data.order.id);
  }

  const work = async (queue: string[]) => Promise.all(Array.from({ length: WORKERS }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) await floorCycle(call, next);
  }));
  await work(orders.slice(0, WARMUP_ORDERS));
  const stopCpu = await startCpu();
  const started = performance.now();
  await work(orders.slice(WARMUP_ORDERS));
  const perSecond = Math.round((ORDERS / ((performance.now() - started) / 1000)) * 10) / 10;
  const cpu = await stopCpu(ORDERS);
  await close();

  const lines = Array.from({ length: 100 }, (_, i) => ({
    line_number: i + 1, item_number_display: `ITEM-${10000 + i}`, description: `Bench item ${i + 1} with a longer description to wrap`,
    unit_of_measure: 'EA', qty_ordered: 1 + (i % 9), qty_packed: 1 + (i % 9),
  }));
  const input = {
    order_number: 123456, release_number: '42', customer_po_number: 'PO-BENCH', customer_name: 'Bench Customer',
    ship_to: { name: 'Bench Customer', address_line_1: '1 Main St', address_line_2: null, city: 'Springfield', state: 'IL', zip_code: '62701', country: 'US' },
    carrier: 'UPS', batch_number: 'PB000001', packed_by_name: 'bench', packed_at: new Date(), lines,
  };
  await renderPackingList(input);
  const pdfRuns: number[] = [];
  for (let run = 0; run < PDF_RUNS; run++) {
    const begun = performance.now();
    await renderPackingList(input);
    pdfRuns.push(performance.now() - begun);
  }
  const worstPdf = Math.round(Math.max(...pdfRuns) * 10) / 10;
  return [
    { operation: `full cycle, ${ORDERS} orders of 10 lines, ${WORKERS} at a time`, value: perSecond, unit: 'orders/s', target: '>= 50', met: perSecond >= 50, cpu },
    { operation: `packing list PDF, 100 lines (worst of ${PDF_RUNS})`, value: worstPdf, unit: 'ms', target: '< 200', met: worstPdf < 200 },
  ];
}

/** The floor's whole cycle of a released order: start a batch, pick every line, complete, verify, pack, ship. */
export async function floorCycle(call: Call, orderId: string): Promise<void> {
  const { data: started } = (await call('POST', '/pick-batches', { order_id: orderId }))!;
  const { data: session } = (await call('GET', `/pick-batches/${started.ID}`))!;
  for (const line of session.Lines) await call('POST', `/pick-batches/${session.ID}/lines/${line.PickBatchLineID}/pick`, { qty_picked: line.QtyToPick });
  await call('POST', `/pick-batches/${session.ID}/complete`);
  for (const line of session.Lines) await call('POST', `/pick-batches/${session.ID}/lines/${line.PickBatchLineID}/verify`);
  await call('POST', `/pick-batches/${session.ID}/pack`);
  await call('POST', `/pick-batches/${session.ID}/ship`, { tracking_number: `1ZBENCH${orderId.slice(0, 8)}`, carrier: 'ups' });
}

export function printPicking(rows: PickingRow[]): void {
  console.log('\npick, pack and ship');
  const ms = (us: number | null) => (us === null ? '-' : (us / 1000).toFixed(1));
  for (const row of rows) {
    const cpu = row.cpu ? `; CPU a cycle: service ${ms(row.cpu.service_us)} ms, PostgreSQL ${ms(row.cpu.postgres_us)} ms` : '';
    console.log(`  ${row.operation}: ${row.value} ${row.unit} (target ${row.target}: ${row.met ? 'met' : 'NOT met'})${cpu}`);
  }
}
