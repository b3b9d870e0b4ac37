-- A shipped batch carries its lines' figures (migration 0033): the order-fulfillment report sums them, and a shipped
-- batch without them would count as no lines and no units. The statement that ships a batch sets them with the status;
-- this makes that a rule of the table, for the bench's generated batches and any load from outside the API too.
-- A batch marked shipped outside the API since 0033 gets its figures from its lines first, as 0033 gave them.
update pick_batches b set shipped_lines = l.lines, shipped_lines_in_full = l.in_full, shipped_units_to_pick = l.to_pick,
  shipped_units_picked = l.picked
from (select b.id, count(l.id) lines, count(l.id) filter (where l.qty_picked = l.qty_to_pick) in_full,
    coalesce(sum(l.qty_to_pick), 0) to_pick, coalesce(sum(l.qty_picked), 0) picked
  from pick_batches b left join pick_batch_lines l on l.pick_batch_id = b.id
  where b.shipped_at is not null and b.shipped_lines is null group by b.id) l
where l.id = b.id;
alter table pick_batches add constraint pick_batches_shipped_figures check (shipped_at is null or (
  shipped_lines is not null and shipped_lines_in_full is not null and shipped_units_to_pick is not null and shipped_units_picked is not null));
