import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf, pageParams } from '../../http/pagination.ts';
import { Closed, DataEnvelope, ListEnvelope, noContent, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import {
  DEFAULT_PER_PAGE, DeliveriesQuery, Delivery, DeliveryParams, NewSubscription, RetriedDead, Subscription, SubscriptionChange,
  SubscriptionParams, SubscriptionWithSecret,
} from './schemas.ts';
import {
  changeSubscription, createSubscription, deleteSubscription, listDeliveries, listSubscriptions, pingSubscription, readSubscription,
  retryDead, retryDelivery, rotateSecret,
} from './service.ts';

const tags = ['Webhooks'];
const manage = { permission: 'webhooks.manage' } as const;
const scoped = 'A partner-scoped key sees and manages its partner\'s subscriptions only (404 for others).';
const one = responses({ 200: DataEnvelope(Subscription) });
const withSecret = (status: 200 | 201) => responses({ [status]: DataEnvelope(SubscriptionWithSecret) });
const delivery = responses({ 200: DataEnvelope(Delivery) });

export async function webhookRoutes(app: App, { db, config }: ModuleDeps) {
  app.get('/webhooks', {
    config: manage,
    schema: { tags, summary: 'Webhook subscriptions', description: scoped, querystring: Closed(pageParams(DEFAULT_PER_PAGE)), response: responses({ 200: ListEnvelope(Subscription) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listSubscriptions(db, actorOf(request), page);
    return listResponse(rows, total, page);
  });

  app.post('/webhooks', {
    config: manage,
    schema: {
      tags, summary: 'Subscribe a URL to events',
      description: 'Answers signing_secret once. The URL must be http(s) and resolve to public addresses only (422 invalid_webhook_url). ' +
        'A partner-scoped key subscribes to its partner\'s events; a warehouse key to every event, or to one partner\'s with manufacturer_id.',
      body: NewSubscription, response: withSecret(201),
    },
  }, async (request, reply) => reply.code(201).send({ data: await createSubscription(db, config, actorOf(request), request.body) }));

  app.get('/webhooks/:id', {
    config: manage, schema: { tags, summary: 'A webhook subscription', description: scoped, params: SubscriptionParams, response: one },
  }, async (request) => ({ data: await readSubscription(db, actorOf(request), request.params.id) }));

  app.patch('/webhooks/:id', {
    config: manage,
    schema: { tags, summary: 'Change a webhook subscription', description: `Only the fields sent change. ${scoped}`, params: SubscriptionParams, body: SubscriptionChange, response: one },
  }, async (request) => ({ data: await changeSubscription(db, actorOf(request), request.params.id, request.body) }));

  app.delete('/webhooks/:id', {
    config: manage, schema: { tags, summary: 'Delete a webhook subscription and its delivery log', params: SubscriptionParams, response: noContent },
  }, async (request, reply) => {
    await deleteSubscription(db, actorOf(request), request.params.id);
    return reply.code(204).send(null);
  });

  app.post('/webhooks/:id/rotate-secret', {
    config: manage,
    schema: { tags, summary: 'A new signing secret (shown once); deliveries are signed with it from now on', params: SubscriptionParams, response: withSecret(200) },
  }, async (request) => ({ data: await rotateSecret(db, config, actorOf(request), request.params.id) }));

  app.post('/webhooks/:id/ping', {
    config: manage,
    schema: { tags, summary: 'Send a webhook.ping event to this subscription', description: 'Answers the queued delivery; an inactive subscription is 422.', params: SubscriptionParams, response: delivery },
  }, async (request) => ({ data: await pingSubscription(db, actorOf(request), request.params.id) }));

  app.get('/webhooks/:id/deliveries', {
    config: manage,
    schema: {
      tags, summary: 'The delivery log (newest first)',
      description: 'Each delivery with its attempts: when, how long, the status code, the first KiB of the answer. Kept 30 days. Filter: status.',
      params: SubscriptionParams, querystring: DeliveriesQuery, response: responses({ 200: ListEnvelope(Delivery) }),
    },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listDeliveries(db, actorOf(request), request.params.id, { status: request.query.status }, page);
    return listResponse(rows, total, page);
  });

  app.post('/webhooks/:id/deliveries/:deliveryId/retry', {
    config: manage,
    schema: { tags, summary: 'Send a failed or dead delivery again', description: 'Its attempts start over; a pending or delivered one is 422 invalid_status.', params: DeliveryParams, response: delivery },
  }, async (request) => ({ data: await retryDelivery(db, actorOf(request), request.params.id, request.params.deliveryId) }));

  app.post('/webhooks/:id/deliveries/retry-dead', {
    config: manage,
    schema: { tags, summary: 'Send every dead delivery of the subscription again', params: SubscriptionParams, response: responses({ 200: DataEnvelope(RetriedDead) }) },
  }, async (request) => ({ data: await retryDead(db, actorOf(request), request.params.id) }));
}
