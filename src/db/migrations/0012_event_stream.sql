-- The poll stream: each tenant's inbox of events it has not acknowledged. A tenant is the warehouse (keys without a
-- partner scope see every event) or one supply partner (its scoped keys see its own events). Every event enters the
-- warehouse's inbox and, when it belongs to a partner, that partner's, in the transaction that writes it; an
-- acknowledgement deletes the tenant's row. A poll so reads only what is still unacknowledged, however many events are
-- stored.
create table event_inbox (
  tenant text not null,
  -- No foreign key: only emit() writes here, with the event, and outbox retention must not have to pass through it.
  event_seq bigint not null,
  kind text not null,
  primary key (tenant, event_seq)
);
create index event_inbox_kind_idx on event_inbox (tenant, kind, event_seq);

-- Events written before the stream existed are unacknowledged for both of their tenants.
insert into event_inbox (tenant, event_seq, kind)
select 'warehouse', seq, kind from outbox_events
union all
select manufacturer_id::text, seq, kind from outbox_events where manufacturer_id is not null;
