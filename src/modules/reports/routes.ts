import { actorOf } from '../../http/auth.ts';
import { EVERY_ROW, listResponse, pageOf } from '../../http/pagination.ts';
import { sendCsvRows } from '../../http/csv-export.ts';
import { CSV, JSON_TYPE, preferredRepresentation } from '../../http/representations.ts';
import { CsvText, Closed, ErrorEnvelope } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { orderFulfillment, movements, receiving } from './activity.ts';
import { knownManufacturer, periodOf, reportParams, requireWarehouseReader } from './period.ts';
import { cycleCountAccuracy, exceptions } from './quality.ts';
import { inOneSnapshot, reportEnvelope, type Report } from './report.ts';
import { statementRoutes } from './statement-routes.ts';
import { inventoryValuation, stockStatus, velocity } from './stock.ts';

const REPORTS: Report[] = [inventoryValuation, stockStatus, orderFulfillment, receiving, movements, cycleCountAccuracy, exceptions, velocity];

const ACCESS = 'Permission history.view; a partner-scoped key gets 404. `Accept: text/csv` answers every row of the report (no paging) as CSV.';

export async function reportRoutes(app: App, deps: ModuleDeps) {
  const { db, reads } = deps;
  for (const report of REPORTS) {
    app.get(`/reports/${report.name}`, {
      config: { permission: 'history.view' },
      // Before the parameters are checked: a partner-scoped key must not learn from a 400 that the route exists.
      onRequest: async (request) => requireWarehouseReader(actorOf(request)),
      schema: {
        tags: ['Reports'], summary: report.summary,
        description: `${report.description}\n\n${report.periodic ? 'The period is UTC days from `from` to `to` (inclusive); from after to is 400. ' : ''}` +
          `An unknown manufacturer is 422. ${ACCESS}`,
        querystring: Closed(reportParams(report.periodic, report.defaultPerPage, report.params)),
        response: {
          200: { description: 'The page of rows, and the totals of the whole report in meta.', content: { [JSON_TYPE]: { schema: reportEnvelope(report) }, [CSV]: { schema: CsvText } } },
          '4xx': ErrorEnvelope, '5xx': ErrorEnvelope,
        },
      },
    }, async (request, reply) => {
      const query = request.query as Record<string, unknown> & { from?: string; to?: string; manufacturer?: string; page?: number; per_page?: number };
      const period = report.periodic ? periodOf(query) : null;
      const manufacturerId = await knownManufacturer(db, query.manufacturer);
      const csv = preferredRepresentation(request, [JSON_TYPE, CSV]) === CSV;
      const page = csv ? EVERY_ROW : pageOf(query, report.defaultPerPage);
      // The partner is checked on the primary (one just made is known at once); the report may lag on a replica.
      const result = await inOneSnapshot(reads, (tx) => report.run(tx, { query, period, manufacturerId, page }));
      if (csv) return sendCsvRows(reply, period ? `${report.name}-${period.from}-${period.to}.csv` : `${report.name}.csv`, result.rows, result.columns);
      const { meta } = listResponse(result.rows, result.total, page);
      return reply.send({
        data: result.rows,
        meta: { ...meta, from: period?.from ?? null, to: period?.to ?? null, manufacturer_id: manufacturerId, generated_at: new Date(), totals: result.totals },
      });
    });
  }
  await statementRoutes(app, deps);
}
