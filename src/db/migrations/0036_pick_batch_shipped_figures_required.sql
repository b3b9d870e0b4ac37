-- A shipped batch carries its lines' figures (migration 0033): the order-fulfillment report sums them, and a shipped
-- batch without them would count as no lines and no units. The statement that ships a batch sets them with the status;
-- this makes that a rule of the table, for the bench's generated batches and any load from outside the API too.
alter table pick_batches add constraint pick_batches_shipped_figures check (shipped_at is null or (
  shipped_lines is not null and shipped_lines_in_full is not null and shipped_units_to_pick is not null and shipped_units_picked is not null));
