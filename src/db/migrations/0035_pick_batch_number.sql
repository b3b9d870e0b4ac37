-- A pick batch's number from its sequence value, in one place for the service and the bench's generated batches:
-- PB and the value padded to six digits, never cut to them (lpad cuts a longer string: the millionth batch took
-- PB100000's number, a 409 conflict on every batch from then on).
create function pick_batch_number(n bigint) returns text language sql immutable parallel safe as $$
  select 'PB' || lpad(n::text, greatest(6, length(n::text)), '0')
$$;
