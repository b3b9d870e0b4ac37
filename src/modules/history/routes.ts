import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import { ListEnvelope, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { historyOf } from './queries.ts';
import { DEFAULT_PER_PAGE, HistoryEntry, HistoryQuery } from './schemas.ts';

export async function historyRoutes(app: App, { db }: ModuleDeps) {
  app.get('/history', {
    config: { permission: 'history.view' },
    schema: {
      tags: ['History'], summary: 'The audit trail of one record (newest first)',
      description: 'Every change the service made to the record, with the user and key that made it and the values before and after. ' +
        'A partner-scoped key sees its partner\'s rows only; a record with none of them is 404 for it. Unscoped keys get an empty list ' +
        'for a record without history.',
      querystring: HistoryQuery, response: responses({ 200: ListEnvelope(HistoryEntry) }),
    },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await historyOf(db, actorOf(request), request.query.entity_type, request.query.entity_id, page);
    return listResponse(rows, total, page);
  });
}
