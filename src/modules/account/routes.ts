// The key holder's own identity: who the key acts as, what it is, and what it may do right now.
import { Type } from 'typebox';
import { actorOf } from '../../http/auth.ts';
import { Closed, DataEnvelope, Nullable, Timestamp, Uuid, responses } from '../../http/schemas.ts';
import type { App } from '../../http/types.ts';
import { PERMISSIONS, ROLES } from '../../domain/roles.ts';

const Me = Closed({
  user: Closed({
    id: Uuid,
    name: Type.String(),
    email: Nullable(Type.String()),
    role: Type.Enum(ROLES),
    manufacturer_id: Nullable(Uuid),
  }),
  key: Closed({ id: Uuid, name: Type.String(), scopes: Type.Array(Type.String()), expires_at: Nullable(Timestamp) }),
  permissions: Type.Array(Type.Enum(PERMISSIONS), { description: 'Effective: the key\'s scopes that the user\'s role has, as of this request.' }),
});

export async function accountRoutes(app: App) {
  app.get('/me', {
    schema: { tags: ['Account'], summary: 'The caller\'s user, key and effective permissions', response: responses({ 200: DataEnvelope(Me) }) },
  }, async (request) => {
    const actor = actorOf(request);
    return {
      data: {
        user: { id: actor.userId, name: actor.userName, email: actor.email, role: actor.role, manufacturer_id: actor.manufacturerId },
        key: { id: actor.apiKeyId, name: actor.keyName, scopes: actor.scopes, expires_at: actor.expiresAt },
        permissions: [...actor.permissions],
      },
    };
  });
}
