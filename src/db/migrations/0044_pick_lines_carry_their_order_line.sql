-- A pick line carries what its order line shows the picker: its line number, item number, description and unit of
-- measure. An order line's are copies made at order entry and never change after it (no request edits a line, and a
-- line with a batch cannot be deleted), so a copy made when the batch starts stays exact. The pick-batch list joined
-- each of its 250 lines (25 batches of 10) to its order line for them: an index probe into the biggest table of an
-- order's, 1.1 of the 3.4 ms PostgreSQL took for a page on the bench data (pgbench, one client).
alter table pick_batch_lines add column line_number integer, add column item_number_display text,
  add column item_description text, add column unit_of_measure text;

update pick_batch_lines l set line_number = ol.line_number, item_number_display = ol.item_number_display,
  item_description = ol.item_description, unit_of_measure = ol.unit_of_measure
from order_lines ol where ol.id = l.order_line_id;

alter table pick_batch_lines alter column line_number set not null, alter column item_number_display set not null,
  alter column item_description set not null, alter column unit_of_measure set not null;
