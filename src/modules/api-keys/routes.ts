import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import { DataEnvelope, IdParams, ListEnvelope, noContent, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { ApiKey, CreateApiKey, CreatedApiKey, DEFAULT_PER_PAGE, ListApiKeysQuery } from './schemas.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './service.ts';

const tags = ['API keys'];
const config = { permission: 'admin.api_keys' } as const;

export async function apiKeyRoutes(app: App, { db }: ModuleDeps) {
  app.post('/api-keys', {
    config: { ...config, secretFields: ['key'] },
    schema: {
      tags, summary: 'Create an API key for a user',
      description: 'Scopes must lie within the caller\'s permissions (else 403) and the user\'s role (else 422). The plaintext key is returned once: an Idempotency-Key replay answers without it.',
      body: CreateApiKey, response: responses({ 201: DataEnvelope(CreatedApiKey) }),
    },
  }, async (request, reply) => reply.code(201).send({ data: await createApiKey(db, actorOf(request), request.body) }));

  app.get('/api-keys', {
    config,
    schema: { tags, summary: 'List API keys (never the keys themselves)', querystring: ListApiKeysQuery, response: responses({ 200: ListEnvelope(ApiKey) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listApiKeys(db, actorOf(request), request.query, page);
    return listResponse(rows, total, page);
  });

  app.delete('/api-keys/:id', {
    config: { ...config, changesActors: true },
    schema: { tags, summary: 'Revoke an API key (it stops at the next request)', params: IdParams, response: noContent },
  }, async (request, reply) => {
    await revokeApiKey(db, actorOf(request), request.params.id);
    return reply.code(204).send(null);
  });
}
