import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import { DataEnvelope, ListEnvelope, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { exceptionDetail, listExceptions, type ExceptionKind } from './queries.ts';
import { AwaitBody, DEFAULT_PER_PAGE, ExceptionDetail, ExceptionParams, ListExceptionsQuery, PickException, ReviewBody } from './schemas.ts';
import { awaitSupplyPartner, reviewException } from './service.ts';

const tags = ['Exceptions'];
const detail = responses({ 200: DataEnvelope(ExceptionDetail) });

// The spec's three detail paths: /exceptions/{id} is a short pick's, the other kinds have a path of their own.
const BASES: { base: string; kind: ExceptionKind; name: string }[] = [
  { base: '/exceptions', kind: 'short_pick', name: 'short pick' },
  { base: '/exceptions/mispicks', kind: 'mispick', name: 'mispick' },
  { base: '/exceptions/quality', kind: 'quality', name: 'quality flag' },
];

export async function exceptionRoutes(app: App, { db, reads }: ModuleDeps) {
  app.get('/exceptions', {
    config: { permission: 'exceptions.view' },
    schema: {
      tags, summary: 'Pick exceptions of every kind (newest first)',
      description: 'One row shape for short picks, mispicks and quality flags; the other kinds\' fields are zero. A partner-scoped key sees its partner\'s only.',
      querystring: ListExceptionsQuery, response: responses({ 200: ListEnvelope(PickException) }),
    },
  }, async (request) => {
    const { kind, status, awaiting_supply_partner, order, item } = request.query;
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const awaitingSupplyPartner = awaiting_supply_partner === undefined ? undefined : awaiting_supply_partner === '1';
    const { rows, total } = await listExceptions(reads, actorOf(request), { kind, status, awaitingSupplyPartner, order, item }, page);
    return listResponse(rows, total, page);
  });

  for (const { base, kind, name } of BASES) {
    app.get(`${base}/:id`, {
      config: { permission: 'exceptions.view' },
      schema: { tags, summary: `A ${name} exception, with its order block`, params: ExceptionParams, response: detail },
    }, async (request) => ({ data: await exceptionDetail(db, actorOf(request), kind, request.params.id) }));

    app.post(`${base}/:id/review`, {
      config: { permission: 'exceptions.review' },
      schema: {
        tags, summary: `Review a ${name} exception`,
        description: 'open -> reviewed (else 422 invalid_status); resolves the exception\'s open order block with the disposition and note.',
        params: ExceptionParams, body: ReviewBody, response: detail,
      },
    }, async (request) => ({ data: await reviewException(db, actorOf(request), kind, request.params.id, request.body) }));

    app.post(`${base}/:id/await-supply-partner`, {
      config: { permission: 'exceptions.review', optionalBody: true },
      schema: {
        tags, summary: `Mark a ${name} exception as waiting for the supply partner`,
        description: 'Stamps awaiting_supply_partner_at and the note on the open order block; the exception stays open.',
        params: ExceptionParams, body: AwaitBody, response: detail,
      },
    }, async (request) => ({ data: await awaitSupplyPartner(db, actorOf(request), kind, request.params.id, request.body) }));
  }
}
