import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import { ListEnvelope, noContent, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { AckBody, DEFAULT_PER_PAGE, Event, PollQuery } from './schemas.ts';
import { acknowledgeEvents, pollEvents } from './service.ts';

const tags = ['Events'];
// The stream is for integrations, as webhook subscriptions are.
const integrations = { permission: 'webhooks.manage' } as const;

export async function eventRoutes(app: App, { db, reads }: ModuleDeps) {
  app.get('/shipments/events', {
    config: integrations,
    schema: {
      tags, summary: 'Events not yet acknowledged (oldest first)',
      description: 'The caller\'s stream: a partner-scoped key sees its partner\'s events, a key without a scope every event. ' +
        'An event stays in the stream until acknowledged. Filter: kind. Each kind\'s data is described in docs/events.md.',
      querystring: PollQuery, response: responses({ 200: ListEnvelope(Event) }),
    },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await pollEvents(reads, actorOf(request), { kind: request.query.kind }, page);
    return listResponse(rows, total, page);
  });

  app.post('/shipments/events/ack', {
    config: integrations,
    schema: {
      tags, summary: 'Acknowledge handled events',
      description: 'Takes the events out of the caller\'s stream only (the warehouse\'s and a partner\'s streams are separate). ' +
        'Acknowledging again changes nothing; ids naming no event of the stream are 422 with details.ids, and nothing is acknowledged.',
      body: AckBody, response: noContent,
    },
  }, async (request, reply) => {
    await acknowledgeEvents(db, actorOf(request), request.body.ids);
    return reply.code(204).send(null);
  });
}
