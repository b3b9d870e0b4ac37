// GET /manufacturers/{id}/statement: outside /reports (closed to partner-scoped keys), since a consignor reads its own.
import { Type } from 'typebox';
import { actorOf } from '../../http/auth.ts';
import { EVERY_ROW, listResponse, pageOf, pageParams } from '../../http/pagination.ts';
import { sendCsvRows } from '../../http/csv-export.ts';
import { CSV, JSON_TYPE, PDF, preferredRepresentation, sendFile } from '../../http/representations.ts';
import { CsvText, Closed, ErrorEnvelope, Nullable, PageMeta, Timestamp, Uuid } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { INVENTORY_STATUSES, MOVEMENT_TYPES } from '../inventory/schemas.ts';
import { periodOf, periodParams } from './period.ts';
import { inOneSnapshot } from './report.ts';
import { statementOf, type Statement } from './statement.ts';
import { renderStatement } from './statement-pdf.ts';

const DEFAULT_PER_PAGE = 100;
const Status = Type.Enum(INVENTORY_STATUSES);

const StatementMovement = Closed({
  id: Uuid, performed_at: Timestamp, movement_type: Type.Enum(MOVEMENT_TYPES), inventory_status: Status,
  quantity: Type.Integer({ description: 'Signed. A quarantine row moves the quarantine balance, not on-hand.' }),
  balance_after: Type.Integer({ description: 'On hand after the movement.' }),
  reason: Type.String(), reference_type: Type.String(), reference_id: Uuid, location_code: Nullable(Type.String()), performed_by_name: Type.String(),
});

const StatementBody = Closed({
  manufacturer: Closed({ id: Uuid, code: Type.String(), name: Type.String() }),
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  generated_at: Timestamp,
  totals: Closed({
    items: Type.Integer(), opening_on_hand: Type.Integer(), closing_on_hand: Type.Integer(),
    opening_quarantine: Type.Integer(), closing_quarantine: Type.Integer(),
    by_type: Type.Array(Closed({ movement_type: Type.Enum(MOVEMENT_TYPES), inventory_status: Status, movements: Type.Integer(), quantity: Type.Integer() })),
  }, { description: 'Over every item of the statement, not only this page.' }),
  items: Type.Array(Closed({
    item_id: Uuid, item_number_display: Type.String(), description: Type.String(),
    opening_on_hand: Type.Integer(), closing_on_hand: Type.Integer(), opening_quarantine: Type.Integer(), closing_quarantine: Type.Integer(),
    movements: Type.Array(StatementMovement),
  })),
});

const CSV_COLUMNS = ['item_number_display', 'description', 'entry', 'performed_at', 'inventory_status', 'quantity', 'balance_after',
  'quarantine_balance', 'reason', 'reference_type', 'reference_id', 'location_code', 'performed_by_name'] as const;

/** One CSV row per opening balance, movement and closing balance, item after item. */
function statementRows(statement: Statement): Record<string, unknown>[] {
  return statement.items.flatMap((item) => {
    const of = { item_number_display: item.item_number_display, description: item.description };
    let quarantine = item.opening_quarantine;
    return [
      { ...of, entry: 'opening', performed_at: statement.from, balance_after: item.opening_on_hand, quarantine_balance: quarantine },
      ...item.movements.map((movement) => {
        if (movement.inventory_status === 'quarantine') quarantine += movement.quantity;
        return { ...of, entry: movement.movement_type, ...movement, quarantine_balance: quarantine };
      }),
      { ...of, entry: 'closing', performed_at: statement.to, balance_after: item.closing_on_hand, quarantine_balance: item.closing_quarantine },
    ];
  });
}

export async function statementRoutes(app: App, { db }: ModuleDeps) {
  app.get('/manufacturers/:id/statement', {
    config: { permission: 'history.view' },
    schema: {
      tags: ['Reports'], summary: 'A supply partner\'s statement of consigned stock for a period',
      description: 'Per item (those with stock at the start or end of the period, or movements in it; paged by item): the opening ' +
        'on-hand and quarantine balances, every movement of the period (receipts, quarantine, adjustments with reason and who, ' +
        'shipments, count corrections, returns, transfers) and the closing balances, all from the ledger: opening + the available ' +
        'movements = closing. Period: UTC days `from`..`to` (default the last 30 days). `Accept: text/csv` or `application/pdf` ' +
        'gives every item of the statement as CSV (no paging), `application/pdf` the page as a PDF to file. Permission history.view; a partner-scoped key reads its own partner only ' +
        '(404 for another).',
      params: Closed({ id: Uuid }),
      querystring: Closed({ ...periodParams, ...pageParams(DEFAULT_PER_PAGE) }),
      response: {
        200: {
          description: 'The statement.',
          content: {
            [JSON_TYPE]: { schema: Closed({ data: StatementBody, meta: PageMeta }) },
            [CSV]: { schema: CsvText },
            [PDF]: { schema: Type.String({ format: 'binary' }) },
          },
        },
        '4xx': ErrorEnvelope, '5xx': ErrorEnvelope,
      },
    },
  }, async (request, reply) => {
    const period = periodOf(request.query);
    const representation = preferredRepresentation(request, [JSON_TYPE, CSV, PDF]);
    const page = representation === CSV ? EVERY_ROW : pageOf(request.query, DEFAULT_PER_PAGE);
    const { statement, total } = await inOneSnapshot(db, (tx) => statementOf(tx, actorOf(request), request.params.id, period, page));
    const { meta } = listResponse(statement.items, total, page);
    const fileName = `statement-${statement.manufacturer.code}-${period.from}-${period.to}${meta.total_pages > 1 ? `-p${page.page}` : ''}`;
    switch (representation) {
      case CSV: return sendCsvRows(reply, `${fileName}.csv`, statementRows(statement), CSV_COLUMNS);
      case PDF: return sendFile(reply, PDF, `${fileName}.pdf`, await renderStatement(statement, meta));
      default: return reply.send({ data: statement, meta });
    }
  });
}
