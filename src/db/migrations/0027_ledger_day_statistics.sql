-- How many (UTC day, movement type, inventory status) groups the ledger holds, for the period reports that group by
-- them (reports/movements, the consignor statement's totals by type): without it the planner takes every movement for
-- a group of its own, sorts a year's movements to group them (500,000 on the bench data) instead of hashing them into
-- ~1,500 groups, and reads a year in ~800 ms instead of ~490. Kept on the partitioned table as a whole, which
-- autovacuum never analyzes: the hourly maintenance does, once a day (src/db/partitions.ts).
create statistics inventory_movements_day_groups (ndistinct)
  on ((performed_at at time zone 'UTC')::date), movement_type, inventory_status from inventory_movements;
