-- The order-fulfillment report over a year read far more than its figures: it counts the period's orders by partner
-- three times (entered, released, shipped), times release to ship for the shipped ones, and sums the lines of the pick
-- batches shipped in it. The orders' date indexes held the date alone, so each count fetched every order row of the
-- period, and the batches' figures were joined from every line of every batch. On the bench (200,000 orders over two
-- years, a batch of two lines for each shipped order) a year took 1,143 ms (p50) against the 1 s target. Now every
-- part is an index-only scan (docs/decisions.md, "Reports").

-- The partner, and for the shipped the release time, in the orders' date indexes. Neither column is new to an index of
-- orders (manufacturer_id is in orders_manufacturer_idx, released_at in orders_released_idx), so an order's updates
-- stay as HOT as they were.
drop index orders_created_idx;
create index orders_created_idx on orders (created_at) include (manufacturer_id);
drop index orders_released_idx;
create index orders_released_idx on orders (released_at) include (manufacturer_id) where released_at is not null;
drop index orders_shipped_idx;
create index orders_shipped_idx on orders (shipped_at) include (manufacturer_id, released_at) where shipped_at is not null;

-- A shipped batch's figures, set in the statement that ships it (src/modules/picking/shipping.ts) from its lines, which
-- nothing changes after: null until then.
alter table pick_batches
  add column shipped_lines integer,
  add column shipped_lines_in_full integer,
  add column shipped_units_to_pick bigint,
  add column shipped_units_picked bigint;
update pick_batches b set shipped_lines = l.lines, shipped_lines_in_full = l.in_full, shipped_units_to_pick = l.to_pick,
  shipped_units_picked = l.picked
from (select b.id, count(l.id) lines, count(l.id) filter (where l.qty_picked = l.qty_to_pick) in_full,
    coalesce(sum(l.qty_to_pick), 0) to_pick, coalesce(sum(l.qty_picked), 0) picked
  from pick_batches b left join pick_batch_lines l on l.pick_batch_id = b.id where b.shipped_at is not null group by b.id) l
where l.id = b.id;
drop index pick_batches_shipped_idx;
create index pick_batches_shipped_idx on pick_batches (shipped_at)
  include (manufacturer_id, shipped_lines, shipped_lines_in_full, shipped_units_to_pick, shipped_units_picked) where shipped_at is not null;
