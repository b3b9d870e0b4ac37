import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf, pageParams } from '../../http/pagination.ts';
import { Closed, DataEnvelope, IdParams, ListEnvelope, noContent, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { validatorCompiler } from '../../http/validation.ts';
import { CarrierMessage, CarrierReceipt, CarrierWebhook, CreatedCarrierWebhook, NewCarrierWebhook, TokenParams } from './schemas.ts';
import { createCarrierWebhook, deleteCarrierWebhook, listCarrierWebhooks, receiveCarrierMessage } from './service.ts';

const tags = ['Carrier webhooks'];
const administers = { administers: true } as const;
const DEFAULT_PER_PAGE = 50;
/** A carrier message is small; anything larger is refused before it is read. */
const MESSAGE_LIMIT_BYTES = 64 * 1024;

export async function carrierWebhookRoutes(app: App, { db, config }: ModuleDeps) {
  app.get('/carrier-webhooks', {
    config: administers,
    schema: { tags, summary: 'Inbound carrier webhooks', querystring: Closed(pageParams(DEFAULT_PER_PAGE)), response: responses({ 200: ListEnvelope(CarrierWebhook) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listCarrierWebhooks(db, page);
    return listResponse(rows, total, page);
  });

  app.post('/carrier-webhooks', {
    config: administers,
    schema: {
      tags, summary: 'Register an inbound carrier webhook',
      description: 'Answers the token (the URL path segment) and the signing secret once; neither can be read again.',
      body: NewCarrierWebhook, response: responses({ 201: DataEnvelope(CreatedCarrierWebhook) }),
    },
  }, async (request, reply) => reply.code(201).send({ data: await createCarrierWebhook(db, config, actorOf(request), request.body) }));

  app.delete('/carrier-webhooks/:id', {
    config: administers,
    schema: { tags, summary: 'Delete an inbound carrier webhook (its token then answers 410)', params: IdParams, response: noContent },
  }, async (request, reply) => {
    await deleteCarrierWebhook(db, actorOf(request), request.params.id);
    return reply.code(204).send(null);
  });
}

/** The carrier's side, outside /api/v1 and without a key: the signature over the raw body authenticates it. */
export async function carrierInboxRoutes(app: App, { db, config }: ModuleDeps) {
  await app.register(async (plugin) => {
    const inbox = plugin as App;
    inbox.removeAllContentTypeParsers();
    // The raw text, unparsed: the signature is over these exact bytes, and nothing is parsed before it is checked.
    inbox.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: MESSAGE_LIMIT_BYTES }, (_request, body, done) => done(null, body));
    inbox.post('/webhooks/carrier/:tenantToken', {
      bodyLimit: MESSAGE_LIMIT_BYTES,
      // The body is read after its signature is checked (in the service): only the path is validated here.
      validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : validatorCompiler(route)),
      schema: {
        tags, summary: 'A carrier reports a label (signed; no API key)',
        description: 'Header Carrier-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with the webhook\'s secret>. ' +
          'Unknown or deleted token: 410. Missing, wrong or stale (more than 5 minutes either way) signature: 401. ' +
          'Body: {event_id, tracking_number, batch_number or order_number, status?}; malformed: 400; no batch, several, or one not yet picked: 422. ' +
          'The parcel is added to the batch (the first is its primary box) and shipment.tracking_updated emitted; the same event_id again changes nothing.',
        params: TokenParams,
        body: { content: { 'application/json': { schema: CarrierMessage } } },
        response: responses({ 200: DataEnvelope(CarrierReceipt) }),
      },
    }, async (request) => ({
      data: await receiveCarrierMessage(db, config, request.params.tenantToken, request.headers['carrier-signature'] as string | undefined, String(request.body ?? '')),
    }));
  });
}
