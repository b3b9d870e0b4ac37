// Bulk JSON import, import profiles, and the CSV/XLSX file import with its refusals (nothing written on any of them).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createItem, createLocation, createManufacturer, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';
import { inflatingZip, sheetXml, xlsxFile } from './xlsx.ts';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

let t: TestApp;
let partner: string;
let other: string;
let bin: string;
let bolt: string;
let nut: string;
before(async () => {
  t = await startApp();
  partner = await createManufacturer(t, 'IMP');
  other = await createManufacturer(t, 'IMPOTHER');
  bin = await createLocation(t, 'I-A-01');
  bolt = await createItem(t, partner, 'BLT-100', { selling_uom: 'EA', purchase_uom: 'BX' });
  nut = await createItem(t, partner, 'NUT 200');
  await call(t.app, 'POST', `/api/v1/items/${nut}/aliases`, { key: t.adminKey, body: { alias: 'OLD-NUT-9' } });
});
after(() => t.close());

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, key = t.adminKey) =>
  call(t.app, method, `/api/v1${path}`, { key, ...(body !== undefined ? { body } : {}) });

const batchCount = async () => (await t.db.selectFrom('receiving_batches').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;

async function upload(body: Buffer | string, contentType: string, key = t.adminKey, manufacturerId = partner, headers: Record<string, string> = {}) {
  const response = await t.app.inject({
    method: 'POST', url: `/api/v1/receiving/import-file?manufacturer_id=${manufacturerId}`,
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType, ...headers }, payload: body,
  });
  return { status: response.statusCode, body: JSON.parse(response.body), headers: response.headers };
}

const profile = (body: Record<string, unknown>, manufacturerId = partner, key = t.adminKey) =>
  api('PUT', `/receiving/import-profiles/${manufacturerId}`, body, key);

describe('JSON import', () => {
  test('creates a draft batch with qty_expected = qty_received; bad rows are skipped with index, reason and item_id', async () => {
    const foreign = await createItem(t, other, 'FOREIGN-1');
    const retired = await createLocation(t, 'I-RETIRED');
    await api('POST', `/locations/${retired}/retire`);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const answer = await api('POST', '/receiving/import', {
      manufacturer_id: partner, received_date: '2026-04-01', notes: 'ASN 42',
      lines: [
        { item_id: bolt, qty_received: 5, reference_number: 'PO-9', reference_type: 'purchase_order', new_unit_cost: 1.5, new_location_id: bin },
        { item_id: unknown, qty_received: 1 },
        { item_id: foreign, qty_received: 2 },
        { item_id: nut, qty_received: 3, new_location_id: retired },
        { item_id: nut, qty_received: 7 },
      ],
    });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    const { batch, lines, added, skipped } = answer.body.data;
    assert.equal(batch.status, 'draft');
    assert.equal(batch.received_date, '2026-04-01T00:00:00.000Z');
    assert.equal(batch.notes, 'ASN 42');
    assert.equal(batch.created_by, null);
    assert.equal('manufacturer_code' in batch, false);
    assert.equal(added, 2);
    assert.deepEqual(lines.map((l: { item_id: string; qty_expected: number; qty_received: number }) => [l.item_id, l.qty_received, l.qty_expected]), [[bolt, 5, 5], [nut, 7, 7]]);
    assert.equal(lines[0].reference_type, 'purchase_order');
    assert.equal(lines[0].new_unit_cost, 1.5);
    assert.equal('location_code' in lines[0], false);
    assert.deepEqual(skipped.map((s: { index: number; item_id: string }) => [s.index, s.item_id]), [[1, unknown], [2, foreign], [3, nut]]);
    assert.match(skipped[1].reason, /another supply partner/);
    assert.match(skipped[2].reason, /retired/);
    const stored = await api('GET', `/receiving/${batch.id}`);
    assert.equal(stored.body.data.lines.length, 2);
    const history = await t.db.selectFrom('history').select('action').where('entity_id', '=', batch.id).execute();
    assert.deepEqual(history.map((h) => h.action), ['imported']);
  });

  test('all rows bad: 422 with the skipped rows, no batch; bad types 400; scope 403; inventory.import needed', async () => {
    const before = await batchCount();
    const none = await api('POST', '/receiving/import', { manufacturer_id: partner, lines: [{ item_id: '00000000-0000-4000-8000-000000000000', qty_received: 1 }] });
    expectError(none, 422, 'invalid_request');
    assert.equal(none.body.error.details.skipped.length, 1);
    for (const body of [
      { manufacturer_id: partner, lines: [] },
      { manufacturer_id: partner, lines: [{ item_id: bolt, qty_received: 0 }] },
      { manufacturer_id: partner, lines: [{ item_id: 'BLT-100', qty_received: 1 }] },
      { manufacturer_id: partner },
    ]) expectError(await api('POST', '/receiving/import', body), 400, 'bad_request');
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: other });
    expectError(await api('POST', '/receiving/import', { manufacturer_id: partner, lines: [{ item_id: bolt, qty_received: 1 }] }, consignor.key), 403, 'forbidden');
    const warehouse = await userWithKey(t, 'warehouse');
    expectError(await api('POST', '/receiving/import', { manufacturer_id: partner, lines: [{ item_id: bolt, qty_received: 1 }] }, warehouse.key), 403, 'forbidden');
    assert.equal(await batchCount(), before);
  });
});

describe('import profiles', () => {
  test('get 404 until set; replace is a full upsert; two fields on one header 422; bad shapes 400; delete 204 then 404', async () => {
    const partnerless = await createManufacturer(t, 'IMPPROF');
    expectError(await api('GET', `/receiving/import-profiles/${partnerless}`), 404, 'not_found');
    const first = await profile({ sheet_name: 'Receipts', header_row: 2, column_map: { item: 'Part #', qty: 'Qty', cost: 'Cost' } }, partnerless);
    assert.equal(first.status, 200);
    assert.deepEqual({ ...first.body.data, updated_at: undefined }, {
      manufacturer_id: partnerless, sheet_name: 'Receipts', header_row: 2, column_map: { item: 'Part #', qty: 'Qty', cost: 'Cost' }, updated_at: undefined,
    });
    const replaced = await profile({ header_row: 1, column_map: { item: 'Item', qty: 'Units' } }, partnerless);
    assert.deepEqual([replaced.body.data.sheet_name, replaced.body.data.column_map], [null, { item: 'Item', qty: 'Units' }]);
    assert.deepEqual((await api('GET', `/receiving/import-profiles/${partnerless}`)).body.data.column_map, { item: 'Item', qty: 'Units' });
    expectError(await profile({ header_row: 1, column_map: { item: 'Part', qty: ' part ' } }, partnerless), 422, 'invalid_request');
    for (const body of [
      { header_row: 0, column_map: { item: 'a', qty: 'b' } }, { header_row: 1, column_map: { item: 'a' } },
      { header_row: 1, column_map: { item: 'a', qty: 'b', colour: 'c' } }, { column_map: { item: 'a', qty: 'b' } },
      { header_row: 1.5, column_map: { item: 'a', qty: 'b' } }, { header_row: 1, column_map: { item: '', qty: 'b' } },
    ]) expectError(await profile(body, partnerless), 400, 'bad_request');
    expectError(await profile({ header_row: 1, column_map: { item: 'a', qty: 'b' } }, '00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: other });
    expectError(await api('GET', `/receiving/import-profiles/${partnerless}`, undefined, consignor.key), 404, 'not_found');
    expectError(await profile({ header_row: 1, column_map: { item: 'a', qty: 'b' } }, partnerless, consignor.key), 404, 'not_found');
    assert.equal((await profile({ header_row: 1, column_map: { item: 'a', qty: 'b' } }, other, consignor.key)).status, 200);
    assert.equal((await api('DELETE', `/receiving/import-profiles/${partnerless}`)).status, 204);
    expectError(await api('DELETE', `/receiving/import-profiles/${partnerless}`), 404, 'not_found');
    const actions = await t.db.selectFrom('history').select('action').where('entity_type', '=', 'receiving_import_profile').where('entity_id', '=', partnerless).execute();
    assert.deepEqual(actions.map((a) => a.action).sort(), ['created', 'deleted', 'updated']);
  });
});

describe('file import', () => {
  test('CSV: header row from the profile, numbers matched normalized or by alias, unknown items and wrong units skipped', async () => {
    await profile({ header_row: 2, column_map: { item: 'Part #', qty: 'Qty', ref: 'PO', cost: 'Unit cost', uom: 'UOM' } });
    const csv = [
      'Shipment notice 42,,,,',
      'part #,QTY,PO,Unit Cost,UOM',
      'blt100,5,PO-1,2.50,BX',
      '"old nut 9",3,,,',
      'NOPE-1,4,,,',
      ',,,,',
      'NUT-200,2,,,KG',
      'BLT 100,1,PO-2,,ea',
    ].join('\r\n');
    const answer = await upload(`\ufeff${csv}`, 'text/csv; charset=utf-8');
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    const { lines, added, skipped, batch } = answer.body.data;
    assert.equal(batch.status, 'draft');
    assert.equal(added, 3);
    assert.deepEqual(lines.map((l: { item_id: string; qty_received: number; qty_expected: number }) => [l.item_id, l.qty_received, l.qty_expected]), [[bolt, 5, 5], [nut, 3, 3], [bolt, 1, 1]]);
    assert.deepEqual([lines[0].reference_number, lines[0].new_unit_cost], ['PO-1', 2.5]);
    assert.deepEqual(skipped.map((s: { index: number; item_id: string }) => [s.index, s.item_id]), [[5, 'NOPE-1'], [7, 'NUT-200']]);
    assert.match(skipped[0].reason, /unknown item/);
    assert.match(skipped[1].reason, /unit KG/);
  });

  test('XLSX: the profile\'s sheet, numbers and text cells alike', async () => {
    await profile({ sheet_name: 'Receipts', header_row: 1, column_map: { item: 'Item', qty: 'Qty' } });
    const file = xlsxFile({ Notes: [['ignore me']], Receipts: [['Item', 'Qty'], ['BLT-100', 12], ['OLD-NUT-9', '4']] });
    const answer = await upload(file, XLSX);
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.deepEqual(answer.body.data.lines.map((l: { item_id: string; qty_received: number }) => [l.item_id, l.qty_received]), [[bolt, 12], [nut, 4]]);
    await profile({ sheet_name: 'Missing', header_row: 1, column_map: { item: 'Item', qty: 'Qty' } });
    expectError(await upload(file, XLSX), 400, 'bad_request');
  });

  test('refusals write nothing: bad quantities, header past the end, missing column, empty, not CSV/XLSX, formulas, huge cells, far cells, zip bombs', async () => {
    await profile({ header_row: 1, column_map: { item: 'Item', qty: 'Qty', cost: 'Cost' } });
    const before = await batchCount();
    const refusals: [string, Buffer | string, string, RegExp][] = [
      ['zero qty', 'Item,Qty,Cost\nBLT-100,0,\n', 'text/csv', /row\(s\) hold invalid values/],
      ['fraction', 'Item,Qty,Cost\nBLT-100,1.5,\n', 'text/csv', /invalid values/],
      ['negative', 'Item,Qty,Cost\nBLT-100,-2,\n', 'text/csv', /invalid values/],
      ['text qty', 'Item,Qty,Cost\nBLT-100,ten,\n', 'text/csv', /invalid values/],
      ['bad cost', 'Item,Qty,Cost\nBLT-100,1,$3\n', 'text/csv', /invalid values/],
      ['no data', 'Item,Qty,Cost\n', 'text/csv', /no data rows/],
      ['missing column', 'Item,Units\nBLT-100,1\n', 'text/csv', /no column "Qty"/],
      ['empty', '', 'text/csv', /empty/],
      ['zip as csv', xlsxFile({ S: [['Item', 'Qty']] }), 'text/csv', /not a CSV/],
      ['binary csv', Buffer.from([0x49, 0x00, 0x51]), 'text/csv', /not a CSV/],
      ['latin-1 csv', Buffer.from([0x49, 0x74, 0x65, 0x6d, 0xe9, 0x0a]), 'text/csv', /UTF-8/],
      ['broken quote', 'Item,Qty\n"BLT-100,1\n', 'text/csv', /cannot be read/],
      ['csv as xlsx', 'Item,Qty\nBLT-100,1\n', XLSX, /not an XLSX/],
      ['broken zip', Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(200, 7)]), XLSX, /not a readable XLSX/],
      ['formula', xlsxFile({ S: [['Item', 'Qty', 'Cost'], ['BLT-100', { formula: '2+3', value: 5 }, null]] }), XLSX, /formulas/],
      ['huge cell', xlsxFile({ S: [['Item', 'Qty', 'Cost'], ['x'.repeat(1001), 1, null]] }), XLSX, /more than 1000 characters/],
      ['far cell', xlsxFile({ S: [['Item', 'Qty', 'Cost']] }, { extraCells: '<row r="2"><c r="XFD1048576"><v>1</v></c></row>' }), XLSX, /beyond column/],
      ['zip bomb', inflatingZip(64 * 1024 * 1024), XLSX, /inflates to more than/],
    ];
    for (const [name, body, type, message] of refusals) {
      const answer = await upload(body, type);
      assert.equal(answer.status, 400, `${name}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.code, 'bad_request', name);
      assert.match(answer.body.error.message, message, name);
    }
    await profile({ header_row: 5, column_map: { item: 'Item', qty: 'Qty' } });
    const pastEnd = await upload('Item,Qty\nBLT-100,1\n', 'text/csv');
    expectError(pastEnd, 400, 'bad_request');
    assert.match(pastEnd.body.error.message, /past the end/);
    assert.equal(await batchCount(), before);
  });

  test('crafted workbooks the reader would fill to gigabytes are refused before it reads them: 400, nothing written, the process lives', async () => {
    await profile({ header_row: 1, column_map: { item: 'Item', qty: 'Qty' } });
    const before = await batchCount();
    const header = { S: [['Item', 'Qty']] };
    const prefixed = '<x:c xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main" x:r="XFD2"><v>1</v></x:c>';
    // Each of these, read, would allocate gigabytes: read-excel-file takes a column from character codes ("zzzzzz" is
    // column 20 million and more) and fills every gap up to the farthest row and column with empty cells.
    const crafted: [string, Buffer, RegExp][] = [
      ['lower-case address', xlsxFile(header, { extraCells: '<row r="2"><c r="zzzzzz2"><v>1</v></c></row>' }), /cell addressed "zzzzzz2"/],
      ['lower-case address in range', xlsxFile(header, { extraCells: '<row r="2"><c r="b2"><v>1</v></c></row>' }), /cell addressed "b2"/],
      ['single-quoted far cell', xlsxFile(header, { extraCells: "<row r='1048576'><c r='XFD1048576'><v>1</v></c></row>" }), /beyond column 100 or row 12000 \(row 1048576\)/],
      ['single-quoted far column', xlsxFile(header, { extraCells: "<row r='2'><c r='XFD2'><v>1</v></c></row>" }), /beyond column 100 or row 12000 \(cell XFD2\)/],
      ['far row without cells', xlsxFile(header, { extraCells: '<row r="99999999"/>' }), /\(row 99999999\)/],
      ['prefixed cell', xlsxFile(header, { extraCells: `<row r="2">${prefixed}</row>` }), /\(cell XFD2\)/],
      ['character reference', xlsxFile(header, { extraCells: '<row r="2"><c r="&#88;FD2"><v>1</v></c></row>' }), /not a plain reference/],
      ['unquoted address', xlsxFile(header, { extraCells: '<row r="2"><c r=XFD2><v>1</v></c></row>' }), /cannot be read safely/],
      ['sheet outside xl/worksheets, far cell', xlsxFile(header, { sheetDir: 'data', extraCells: '<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>' }), /beyond column/],
      ['sheet outside xl/worksheets, formula', xlsxFile({ S: [['Item', 'Qty'], ['BLT-100', { formula: '2+3', value: 5 }]] }, { sheetDir: 'data' }), /formulas/],
      ['unnamed part with sheet data', xlsxFile(header, { extraParts: { 'xl/other/part.xml': sheetXml([['x', { formula: '1+1', value: 2 }]]) } }), /formulas/],
    ];
    for (const [name, file, message] of crafted) {
      const answer = await upload(file, XLSX);
      assert.equal(answer.status, 400, `${name}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.code, 'bad_request', name);
      assert.match(answer.body.error.message, message, name);
    }
    assert.equal(await batchCount(), before);
    // Still read: a sheet the relationships put elsewhere, and a chart's series reference (<c:f>), which is no cell's formula.
    const elsewhere = await upload(xlsxFile({ S: [['Item', 'Qty'], ['BLT-100', 2]] }, { sheetDir: 'data' }), XLSX);
    assert.equal(elsewhere.status, 201, JSON.stringify(elsewhere.body));
    const chart = '<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart><c:plotArea><c:barChart><c:ser><c:val><c:numRef><c:f>S!$B$2</c:f></c:numRef></c:val></c:ser></c:barChart></c:plotArea></c:chart></c:chartSpace>';
    const charted = await upload(xlsxFile({ S: [['Item', 'Qty'], ['BLT-100', 2]] }, { extraParts: { 'xl/charts/chart1.xml': chart } }), XLSX);
    assert.equal(charted.status, 201, JSON.stringify(charted.body));
  });

  test('a mapped header twice in the header row is 400 naming it; unmapped ones may repeat', async () => {
    await profile({ header_row: 1, column_map: { item: 'Item', qty: 'Qty' } });
    const before = await batchCount();
    const twice = await upload('Item,Qty,qty \nBLT-100,1,2\n', 'text/csv');
    expectError(twice, 400, 'bad_request');
    assert.match(twice.body.error.message, /two columns "Qty"/);
    expectError(await upload(xlsxFile({ S: [['Item', 'Item', 'Qty'], ['BLT-100', 'NUT 200', 1]] }), XLSX), 400, 'bad_request');
    assert.equal(await batchCount(), before);
    assert.equal((await upload('Item,Qty,Note,Note\nBLT-100,1,a,b\n', 'text/csv')).status, 201);
  });

  test('CSV rows are counted as file lines: a quoted cell holding line breaks (LF or CRLF) does not shift skipped.index or details.row', async () => {
    await profile({ header_row: 1, column_map: { item: 'Item', qty: 'Qty', ref: 'Ref' } });
    for (const eol of ['\n', '\r\n']) {
      const csv = ['Item,Qty,Ref', 'BLT-100,1,"two', 'lines"', 'NOPE-1,2,'].join(eol) + eol;
      const answer = await upload(csv, 'text/csv');
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      assert.deepEqual(answer.body.data.skipped.map((s: { index: number; item_id: string }) => [s.index, s.item_id]), [[4, 'NOPE-1']], JSON.stringify(eol));
      assert.equal(answer.body.data.lines[0].reference_number, `two${eol}lines`);
    }
    const before = await batchCount();
    const invalid = await upload('Item,Qty,Ref\nBLT-100,1,"a\nb\nc"\nBLT-100,0,\n', 'text/csv');
    expectError(invalid, 400, 'bad_request');
    assert.deepEqual(invalid.body.error.details.map((d: { row: number }) => d.row), [5]);
    assert.equal(await batchCount(), before);
  });

  test('media types, size, profile, scope and permission: 415, 413, 422, 403', async () => {
    await profile({ header_row: 1, column_map: { item: 'Item', qty: 'Qty' } });
    const before = await batchCount();
    expectError(await upload('{"item":"BLT-100"}', 'application/json'), 415, 'unsupported_media_type');
    expectError(await upload('Item,Qty\nBLT-100,1\n', 'text/plain'), 415, 'unsupported_media_type');
    expectError(await upload(Buffer.alloc(5 * 1024 * 1024 + 1, 0x41), 'text/csv'), 413, 'payload_too_large');
    const profileless = await createManufacturer(t, 'IMPNONE');
    expectError(await upload('Item,Qty\nX,1\n', 'text/csv', t.adminKey, profileless), 422, 'invalid_request');
    expectError(await upload('Item,Qty\nNOPE,1\n', 'text/csv'), 422, 'invalid_request');
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: other });
    expectError(await upload('Item,Qty\nBLT-100,1\n', 'text/csv', consignor.key), 403, 'forbidden');
    const qc = await userWithKey(t, 'qc');
    expectError(await upload('Item,Qty\nBLT-100,1\n', 'text/csv', qc.key), 403, 'forbidden');
    expectError(await upload('Item,Qty\nBLT-100,1\n', 'text/csv', t.adminKey, 'not-a-uuid'), 400, 'bad_request');
    assert.equal(await batchCount(), before);
  });

  test('an Idempotency-Key replays a file import instead of importing it twice', async () => {
    await profile({ header_row: 1, column_map: { item: 'Item', qty: 'Qty' } });
    const before = await batchCount();
    const headers = { 'idempotency-key': 'file-import-1' };
    const first = await upload('Item,Qty\nBLT-100,3\n', 'text/csv', t.adminKey, partner, headers);
    const again = await upload('Item,Qty\nBLT-100,3\n', 'text/csv', t.adminKey, partner, headers);
    assert.equal(first.status, 201);
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    expectError(await upload('Item,Qty\nBLT-100,4\n', 'text/csv', t.adminKey, partner, headers), 422, 'idempotency_key_reuse');
    assert.equal(await batchCount(), before + 1);
  });
});
