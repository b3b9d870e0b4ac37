// The packing list PDF: a valid document with the order's facts, a table whose header repeats on every page, a Code 128
// barcode of the order number, and fast enough to render inside the pack request.
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import { test } from 'node:test';
import bwipjs from 'bwip-js';
import { pdfText } from '../src/modules/documents/pdf.ts';
import { renderPackingList, type PackingListInput } from '../src/modules/documents/packing-list.ts';

function order(lineCount: number): PackingListInput {
  return {
    order_number: 1000123,
    release_number: 'ACME-000042',
    customer_po_number: 'PO-77',
    customer_name: 'Lakeside Supply',
    ship_to: { name: 'Lakeside Dock 4', address_line_1: '1 Main St', address_line_2: 'Suite 5', city: 'Springfield', state: 'IL', zip_code: '62701', country: 'US' },
    carrier: 'UPS',
    batch_number: 'PB-20250601-ABC123',
    packed_by_name: 'Carla Gómez',
    packed_at: new Date('2025-06-01T14:03:00Z'),
    lines: Array.from({ length: lineCount }, (_, i) => ({
      line_number: i + 1,
      item_number_display: `HINGE-${1000 + i}`,
      description: i % 9 === 0 ? 'Brass hinge, heavy duty, with a description long enough to wrap onto a second line of its cell' : `Brass hinge ${i}`,
      unit_of_measure: 'EA',
      qty_ordered: 10 + i,
      qty_packed: 10 + i - (i % 4 === 0 ? 1 : 0),
    })),
  };
}

/** Page content streams, inflated when compressed. */
function contentStreams(pdf: Buffer): string[] {
  const text = pdf.toString('latin1');
  const streams: string[] = [];
  for (const match of text.matchAll(/<<([^]*?)>>\s*stream\n/g)) {
    const start = match.index + match[0].length;
    const end = text.indexOf('\nendstream', start);
    const raw = pdf.subarray(start, end);
    streams.push((match[1]!.includes('/FlateDecode') ? inflateSync(raw) : raw).toString('latin1'));
  }
  return streams;
}

/** The text the content streams show: each TJ array's hex strings, decoded (WinAnsi is Latin-1 for these tests). */
function shownText(stream: string): string[] {
  return [...stream.matchAll(/\[(.*?)\] TJ/g)].map((tj) =>
    [...tj[1]!.matchAll(/<([0-9a-f]*)>/g)].map((hex) => Buffer.from(hex[1]!, 'hex').toString('latin1')).join(''));
}

const pagesOf = (pdf: Buffer) => pdf.toString('latin1').match(/\/Type \/Page\b/g)?.length ?? 0;

test('a valid PDF that shows the order, release, PO, ship-to, carrier, batch, packer and every line', async () => {
  const pdf = await renderPackingList(order(3));
  assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
  assert.match(pdf.subarray(-8).toString('latin1'), /%%EOF\s*$/);
  const text = contentStreams(pdf).flatMap(shownText);
  for (const expected of [
    'PACKING LIST', '1000123', 'ACME-000042', 'PO-77', 'Lakeside Dock 4', '1 Main St', 'Suite 5', 'Springfield, IL 62701', 'US',
    'Lakeside Supply', 'UPS', 'PB-20250601-ABC123', '2025-06-01 14:03 UTC by Carla Gómez', 'HINGE-1000', 'HINGE-1002', 'Brass hinge 1',
    'Page 1 of 1',
  ]) {
    assert.ok(text.some((shown) => shown.includes(expected)), `"${expected}" is on the page`);
  }
  assert.ok(text.some((shown) => shown.includes('Total ordered 33   Total packed 32')), 'totals are shown');
});

test('100 lines run over several pages, each with the table header and a page number', async () => {
  const pdf = await renderPackingList(order(100), { compress: false });
  const pages = pagesOf(pdf);
  assert.ok(pages >= 3, `100 lines take several pages (got ${pages})`);
  const text = contentStreams(pdf).flatMap(shownText);
  assert.equal(text.filter((shown) => shown === 'Description').length, pages, 'the table header is repeated on every page');
  assert.equal(text.filter((shown) => shown.includes('(continued)')).length, pages - 1, 'later pages name the order');
  assert.ok(text.includes(`Page ${pages} of ${pages}`));
  for (const line of [1, 50, 100]) assert.ok(text.includes(`HINGE-${999 + line}`), `line ${line} is listed`);
});

test('the order number is drawn as the bars of its Code 128 symbol', async () => {
  const pdf = await renderPackingList(order(1), { compress: false });
  const firstPage = contentStreams(pdf).find((stream) => stream.includes(' re\n'))!;
  // Bars are the rectangles 34 points high; their widths in modules (1.1 pt) are the symbol's bars.
  const bars = [...firstPage.matchAll(/^([\d.]+) ([\d.]+) ([\d.]+) 34 re$/gm)].map((m) => ({ x: Number(m[1]), width: Number(m[3]) }));
  const expected = bwipjs.raw('code128', '1000123', {})[0] as { sbs: number[] };
  assert.deepEqual(bars.map((bar) => Math.round(bar.width / 1.1)), expected.sbs.filter((_, i) => i % 2 === 0));
  // Start C (2 1 1 2 3 2: digits pack two to a symbol) opens the symbol, the stop pattern 2 3 3 1 1 1 2 closes it.
  assert.deepEqual(expected.sbs.slice(0, 6), [2, 1, 1, 2, 3, 2]);
  assert.deepEqual(expected.sbs.slice(-7), [2, 3, 3, 1, 1, 1, 2]);
  const gaps = bars.slice(1).map((bar, i) => Math.round((bar.x - bars[i]!.x - bars[i]!.width) / 1.1));
  assert.deepEqual(gaps, expected.sbs.filter((_, i) => i % 2 === 1));
});

test('text outside the standard fonts\' characters loses accents or becomes "?" instead of garbage', () => {
  assert.equal(pdfText('Łódź — 5 × €'), '?ódz — 5 × €');
  assert.equal(pdfText('Ǆ ő 中'), 'DZ o ?');
  assert.equal(pdfText('a\tb\r\nc'), 'a b c');
});

test('a 100-line order renders in well under 200 ms', async () => {
  const input = order(100);
  await renderPackingList(input);
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const start = performance.now();
    await renderPackingList(input);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const median = times[3]!;
  console.log(`packing list, 100 lines: median ${median.toFixed(1)} ms of 7 renders (${times[0]!.toFixed(1)} to ${times[6]!.toFixed(1)} ms)`);
  assert.ok(median < 200, `median ${median.toFixed(1)} ms`);
});
