-- The exception list's `awaiting_supply_partner` filter asks whether an exception's order block is open and waits for
-- the supply partner. It joined every exception to its block to answer (10,000 exceptions, each with its block: 14
-- requests a second for `awaiting_supply_partner=0`). The blocks that wait are few and this index holds only them, by
-- their exception: `=1` reads them and their exceptions, `=0` leaves them out of the exceptions read in the list's
-- order, and its total is the kept total less the few that wait.
create index order_blocks_awaiting_idx on order_blocks (coalesce(short_pick_exception_id, mispick_exception_id, quality_exception_id))
  where status = 'open' and awaiting_supply_partner_at is not null;
