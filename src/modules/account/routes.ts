// The key holder's own identity: who the key acts as, what it is, and what it may do right now; and the security of
// that user's account (MFA, recovery codes, trusted devices).
import { Type } from 'typebox';
import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf, pageParams } from '../../http/pagination.ts';
import { Closed, DataEnvelope, IdParams, ListEnvelope, Nullable, Timestamp, Uuid, noContent, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { PERMISSIONS, ROLES } from '../../domain/roles.ts';
import { CodeBody, Enrollment, NewTrustedDevice, NoBody, RecoveryCodes, Security, TrustedDevice, TrustedDeviceWithToken } from './schemas.ts';
import {
  confirmMfa, disableMfa, enrollMfa, listTrustedDevices, readSecurity, regenerateRecoveryCodes, removeTrustedDevice, trustDevice,
} from './service.ts';

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

const tags = ['Account'];
const DEFAULT_PER_PAGE = 50;
const codeRules = 'otp: the authenticator\'s code of the previous, current or next 30 s step, not used before on this account, or one ' +
  'unused recovery code (used up by this). A wrong code is 422 invalid_otp; after 5 wrong codes in 15 minutes the account\'s ' +
  'codes are refused with 429 rate_limited until the window ends. MFA not enabled: 422 invalid_status.';

export async function accountRoutes(app: App, deps: ModuleDeps) {
  const { db } = deps;

  app.get('/me', {
    schema: { tags, summary: 'The caller\'s user, key and effective permissions', response: responses({ 200: DataEnvelope(Me) }) },
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

  app.get('/account/security', {
    schema: {
      tags, summary: 'MFA and trusted devices of the key holder\'s own account',
      description: 'enrolled_at: when MFA was enabled (the enrollment confirmed); null while it is off.',
      response: responses({ 200: DataEnvelope(Security) }),
    },
  }, async (request) => ({ data: await readSecurity(db, actorOf(request).userId) }));

  app.post('/account/mfa/enroll', {
    config: { optionalBody: true, secretFields: ['secret', 'otpauth_url'] },
    schema: {
      tags, summary: 'Start MFA: a new TOTP secret for the authenticator app (shown once)',
      description: 'MFA stays off until the first code is confirmed. Enrolling again before that replaces the secret; with MFA enabled it is 422 invalid_status.',
      body: NoBody, response: responses({ 200: DataEnvelope(Enrollment) }),
    },
  }, async (request) => ({ data: await enrollMfa(deps, actorOf(request)) }));

  app.post('/account/mfa/confirm', {
    config: { secretFields: ['recovery_codes'] },
    schema: {
      tags, summary: 'Enable MFA with the first code of the enrolled authenticator; answers the recovery codes (shown once)',
      description: 'otp: the authenticator\'s code (a recovery code does not apply yet). No pending enrollment: 422 invalid_status; ' +
        'a wrong code: 422 invalid_otp, limited as for the other codes (429 rate_limited).',
      body: CodeBody, response: responses({ 200: DataEnvelope(RecoveryCodes) }),
    },
  }, async (request) => ({ data: await confirmMfa(deps, actorOf(request), request.body.otp) }));

  app.post('/account/mfa/recovery-codes', {
    config: { secretFields: ['recovery_codes'] },
    schema: { tags, summary: 'Ten new recovery codes (shown once); the earlier ones stop working', description: codeRules, body: CodeBody, response: responses({ 200: DataEnvelope(RecoveryCodes) }) },
  }, async (request) => ({ data: await regenerateRecoveryCodes(deps, actorOf(request), request.body.otp) }));

  app.post('/account/mfa/disable', {
    schema: { tags, summary: 'Turn MFA off: the secret, the recovery codes and the trusted devices are removed', description: codeRules, body: CodeBody, response: noContent },
  }, async (request, reply) => {
    await disableMfa(deps, actorOf(request), request.body.otp);
    return reply.code(204).send(null);
  });

  app.get('/account/trusted-devices', {
    schema: {
      tags, summary: 'The account\'s trusted devices not yet expired (never their tokens)', querystring: Closed(pageParams(DEFAULT_PER_PAGE)),
      response: responses({ 200: ListEnvelope(TrustedDevice) }),
    },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listTrustedDevices(db, actorOf(request).userId, page);
    return listResponse(rows, total, page);
  });

  app.post('/account/trusted-devices', {
    config: { secretFields: ['token'] },
    schema: {
      tags, summary: 'Trust a device for 30 days; answers its token (shown once)',
      description: `Needs MFA enabled. A sign-in that presents the token may skip the second factor until expires_at. ${codeRules}`,
      body: NewTrustedDevice, response: responses({ 201: DataEnvelope(TrustedDeviceWithToken) }),
    },
  }, async (request, reply) => reply.code(201).send({ data: await trustDevice(deps, actorOf(request), request.body) }));

  app.delete('/account/trusted-devices/:id', {
    schema: { tags, summary: 'Stop trusting a device', description: 'Another account\'s device, an expired or an unknown one: 404.', params: IdParams, response: noContent },
  }, async (request, reply) => {
    await removeTrustedDevice(db, actorOf(request), request.params.id);
    return reply.code(204).send(null);
  });
}
