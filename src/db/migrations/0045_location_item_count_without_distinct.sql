-- The location list's item_count (the items with stock in a location) was count(distinct item_id) over the
-- location's bins, a sort of every bin's item id for each location of the page: at 1,000,000 items (2,667 bins a
-- location) a page of 50 locations cost PostgreSQL 31-36 ms, two thirds of it that sort. An item has at most two bins
-- in a location, one available and one quarantined (item_locations_item_location_status_key), so its items are its
-- bins with stock less the items whose two bins both hold stock: those are found from the quarantined bins, few in
-- any warehouse, through this index. The page then took 9.5-11.9 ms (src/modules/locations/service.ts).
create index item_locations_quarantined_idx on item_locations (location_id) include (item_id)
  where inventory_status = 'quarantine' and qty_on_hand <> 0;
