import { Type } from 'typebox';
import { actorOf } from '../../http/auth.ts';
import { Closed, DataEnvelope, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { CreateShipVia, ShipVia } from './schemas.ts';
import { createShipVia, listActiveShipVia } from './service.ts';

const tags = ['Ship-via'];

export async function shipViaRoutes(app: App, { db }: ModuleDeps) {
  app.get('/ship-via', {
    config: { permission: 'orders.view' },
    schema: {
      tags,
      summary: 'List active ship-via carriers',
      description: 'Global; parcel carriers first, then LTL, then will call, alphabetical within each. Not paged.',
      response: responses({ 200: Closed({ data: Type.Array(ShipVia) }) }),
    },
  }, async () => ({ data: (await listActiveShipVia(db)) }));

  app.post('/ship-via', {
    config: { administers: true },
    schema: { tags, summary: 'Create a ship-via code', body: CreateShipVia, response: responses({ 201: DataEnvelope(ShipVia) }) },
  }, async (request, reply) => reply.code(201).send({ data: (await createShipVia(db, actorOf(request), request.body)) }));
}
