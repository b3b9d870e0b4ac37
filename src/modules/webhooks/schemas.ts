import { Type } from 'typebox';
import { EVENT_KINDS } from '../../domain/events.ts';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Nullable, Text, Timestamp, Uuid } from '../../http/schemas.ts';

export const DEFAULT_PER_PAGE = 50;
const Kinds = Type.Array(Type.Union([Type.Literal('*'), Type.Enum(EVENT_KINDS)]), {
  minItems: 1, maxItems: EVENT_KINDS.length + 1, uniqueItems: true, description: 'Event kinds to receive; ["*"] for all.',
});
const Url = Type.String({ minLength: 1, maxLength: 2000, description: 'http(s); must not point at an internal address (422 invalid_webhook_url).', example: 'https://erp.example.com/hooks/wms' });
const MaxAttempts = Type.Integer({ minimum: 1, maximum: 20, description: 'Attempts before a delivery is dead-lettered (default 8).' });

export const Subscription = Closed({
  id: Uuid,
  url: Type.String(),
  description: Nullable(Type.String()),
  event_kinds: Type.Array(Type.String()),
  is_active: Type.Boolean(),
  max_attempts: Type.Integer(),
  manufacturer_id: Nullable(Uuid),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const SubscriptionWithSecret = Closed({
  ...Subscription.properties,
  signing_secret: Type.String({ description: 'Signs every delivery (X-Service-Signature). Shown on create and rotate only.' }),
});

export const NewSubscription = Closed({
  url: Url,
  description: Type.Optional(Nullable(Text(500))),
  event_kinds: Kinds,
  is_active: Type.Optional(Type.Boolean()),
  max_attempts: Type.Optional(MaxAttempts),
  manufacturer_id: Type.Optional(Nullable(Uuid)),
});

export const SubscriptionChange = Closed({
  url: Type.Optional(Url),
  description: Type.Optional(Nullable(Text(500))),
  event_kinds: Type.Optional(Kinds),
  is_active: Type.Optional(Type.Boolean()),
  max_attempts: Type.Optional(MaxAttempts),
});

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'dead'] as const;

export const Attempt = Closed({
  attempt: Type.Integer(),
  attempted_at: Timestamp,
  duration_ms: Type.Integer(),
  status_code: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  response_body: Nullable(Type.String({ description: 'The first KiB of the answer.' })),
  outcome: Type.Enum(['delivered', 'retry', 'failed', 'dead'] as const),
});

export const Delivery = Closed({
  id: Uuid,
  subscription_id: Uuid,
  event_id: Uuid,
  event_kind: Type.String(),
  status: Type.Enum(DELIVERY_STATUSES),
  attempts: Type.Integer(),
  next_attempt_at: Nullable(Timestamp),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  delivered_at: Nullable(Timestamp),
  created_at: Timestamp,
  attempt_log: Type.Array(Attempt),
});

export const SubscriptionParams = Closed({ id: Uuid });
export const DeliveryParams = Closed({ id: Uuid, deliveryId: Uuid });
export const DeliveriesQuery = Closed({ status: Type.Optional(Type.Enum(DELIVERY_STATUSES)), ...pageParams(DEFAULT_PER_PAGE) });
export const RetriedDead = Closed({ retried: Type.Integer({ description: 'Dead deliveries queued again.' }) });
