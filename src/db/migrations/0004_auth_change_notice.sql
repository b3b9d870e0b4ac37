-- Instances cache the actors of keys (src/http/actor-cache.ts). Every change to users or keys, whoever makes it (the
-- API, the CLI, an operator in psql), tells each instance to forget them, at commit.
create function notify_auth_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('wms_auth_changed', '');
  return null;
end $$;

create trigger users_auth_changed after update or delete on users
  for each statement execute function notify_auth_changed();
create trigger api_keys_auth_changed after update or delete on api_keys
  for each statement execute function notify_auth_changed();
