// The packing list that travels in the box: order and release numbers, ship-to, carrier, the packed lines, and the
// order number as a Code 128 barcode a dock scanner reads. Letter size, pdfkit's built-in Helvetica only.
import { BODY_BOTTOM, BOLD, CONTENT_WIDTH, drawFooters, FONT, letterPdf, PAGE, pdfText, type Pdf } from './pdf.ts';

export interface PackingListInput {
  order_number: number;
  release_number: string | null;
  customer_po_number: string | null;
  customer_name: string;
  ship_to: {
    name: string | null;
    address_line_1: string | null;
    address_line_2: string | null;
    city: string | null;
    state: string | null;
    zip_code: string | null;
    country: string | null;
  };
  /** Ship-via code or name. */
  carrier: string | null;
  batch_number: string;
  packed_by_name: string | null;
  packed_at: Date;
  lines: Array<{
    line_number: number;
    item_number_display: string;
    description: string;
    unit_of_measure: string | null;
    qty_ordered: number;
    qty_packed: number;
  }>;
}

type BarcodeEncoder = (bcid: string, text: string) => Array<{ sbs?: number[] }>;

// Loaded on the first packing list, not at start.
let barcodes: Promise<BarcodeEncoder> | null = null;
const loadBarcodes = () => (barcodes ??= import('bwip-js').then((bwip) => bwip.default.raw as unknown as BarcodeEncoder));

const COLUMNS = [
  { title: 'Line', width: 34, align: 'right' },
  { title: 'Item', width: 118, align: 'left' },
  { title: 'Description', width: 238, align: 'left' },
  { title: 'UOM', width: 38, align: 'left' },
  { title: 'Ordered', width: 56, align: 'right' },
  { title: 'Packed', width: 56, align: 'right' },
] as const;
const CELL_PAD = 4;
const ROW_FONT_SIZE = 9;
const ROW_MAX_LINES = 2;

const formatQty = (qty: number) => qty.toLocaleString('en-US');
const formatTime = (at: Date) => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** The order number as Code 128 bars drawn as rectangles, its digits below; returns the height used. */
function drawBarcode(doc: Pdf, encode: BarcodeEncoder, value: string, right: number, top: number): number {
  const module = 1.1;
  const barHeight = 34;
  const widths = encode('code128', value)[0]?.sbs ?? [];
  const quiet = 10 * module;
  const total = widths.reduce((sum, w) => sum + w, 0) * module;
  let x = right - total - quiet;
  widths.forEach((w, i) => {
    if (i % 2 === 0) doc.rect(x, top, w * module, barHeight);
    x += w * module;
  });
  doc.fill('black');
  doc.font(FONT).fontSize(8).text(value, right - total - quiet, top + barHeight + 2, { width: total, align: 'center', lineBreak: false });
  return barHeight + 12;
}

function field(doc: Pdf, label: string, value: string, x: number, y: number, width: number) {
  doc.font(BOLD).fontSize(8).fillColor('#555555').text(label.toUpperCase(), x, y, { width, lineBreak: false });
  doc.font(FONT).fontSize(10).fillColor('black').text(pdfText(value), x, y + 10, { width, height: 13, ellipsis: true, lineBreak: false });
}

function shipToLines(input: PackingListInput): string[] {
  const to = input.ship_to;
  const cityLine = [to.city, [to.state, to.zip_code].filter(Boolean).join(' ')].filter(Boolean).join(', ');
  return [to.name ?? input.customer_name, to.address_line_1, to.address_line_2, cityLine, to.country]
    .filter((line): line is string => Boolean(line && line.trim()))
    .map(pdfText);
}

/** The first page's header: title, barcode, order facts and ship-to; returns where the table starts. */
function drawFirstHeader(doc: Pdf, encode: BarcodeEncoder, input: PackingListInput): number {
  const top = PAGE.margin;
  const left = PAGE.margin;
  doc.font(BOLD).fontSize(20).fillColor('black').text('PACKING LIST', left, top, { lineBreak: false });
  drawBarcode(doc, encode, String(input.order_number), PAGE.width - PAGE.margin, top);

  const third = CONTENT_WIDTH / 3;
  let y = top + 56;
  field(doc, 'Order number', String(input.order_number), left, y, third - 8);
  field(doc, 'Release number', input.release_number ?? '-', left + third, y, third - 8);
  field(doc, 'Customer PO', input.customer_po_number ?? '-', left + 2 * third, y, third);
  y += 30;
  field(doc, 'Pick batch', input.batch_number, left, y, third - 8);
  field(doc, 'Carrier', input.carrier ?? '-', left + third, y, third - 8);
  field(doc, 'Packed', `${formatTime(input.packed_at)}${input.packed_by_name ? ` by ${input.packed_by_name}` : ''}`, left + 2 * third, y, third);
  y += 34;

  const half = CONTENT_WIDTH / 2;
  doc.font(BOLD).fontSize(8).fillColor('#555555').text('SHIP TO', left, y, { lineBreak: false });
  doc.text('CUSTOMER', left + half, y, { lineBreak: false });
  doc.font(FONT).fontSize(10).fillColor('black');
  const shipTo = shipToLines(input);
  shipTo.forEach((line, i) => doc.text(line, left, y + 11 + i * 12, { width: half - 12, height: 12, ellipsis: true, lineBreak: false }));
  doc.text(pdfText(input.customer_name), left + half, y + 11, { width: half, height: 12, ellipsis: true, lineBreak: false });
  return y + 11 + Math.max(shipTo.length, 1) * 12 + 14;
}

/** A later page's header: enough to match a loose page to its order. */
function drawContinuationHeader(doc: Pdf, input: PackingListInput): number {
  const release = input.release_number ? `, release ${pdfText(input.release_number)}` : '';
  doc.font(BOLD).fontSize(11).fillColor('black')
    .text(`Packing list - order ${input.order_number}${release} (continued)`, PAGE.margin, PAGE.margin, { lineBreak: false });
  return PAGE.margin + 24;
}

function drawTableHeader(doc: Pdf, y: number): number {
  doc.rect(PAGE.margin, y, CONTENT_WIDTH, 16).fill('#e6e6e6');
  doc.font(BOLD).fontSize(ROW_FONT_SIZE).fillColor('black');
  let x = PAGE.margin;
  for (const column of COLUMNS) {
    doc.text(column.title, x + CELL_PAD, y + 4, { width: column.width - 2 * CELL_PAD, align: column.align, lineBreak: false });
    x += column.width;
  }
  return y + 18;
}

function rowCells(line: PackingListInput['lines'][number]): string[] {
  return [
    String(line.line_number), pdfText(line.item_number_display), pdfText(line.description), pdfText(line.unit_of_measure ?? ''),
    formatQty(line.qty_ordered), formatQty(line.qty_packed),
  ];
}

const LINE_HEIGHT = ROW_FONT_SIZE * 1.16;

/** Height of a row: its tallest wrapping cell, at most ROW_MAX_LINES lines. */
function rowHeight(doc: Pdf, cells: string[]): number {
  doc.font(FONT).fontSize(ROW_FONT_SIZE);
  const lines = Math.max(...[1, 2].map((i) => Math.min(ROW_MAX_LINES,
    Math.round(doc.heightOfString(cells[i]!, { width: COLUMNS[i]!.width - 2 * CELL_PAD }) / LINE_HEIGHT) || 1)));
  return lines * LINE_HEIGHT + 6;
}

function drawRow(doc: Pdf, cells: string[], y: number, height: number, shaded: boolean) {
  if (shaded) doc.rect(PAGE.margin, y, CONTENT_WIDTH, height).fill('#f5f5f5');
  doc.font(FONT).fontSize(ROW_FONT_SIZE).fillColor('black');
  let x = PAGE.margin;
  COLUMNS.forEach((column, i) => {
    doc.text(cells[i]!, x + CELL_PAD, y + 3, { width: column.width - 2 * CELL_PAD, height: height - 4, align: column.align, ellipsis: true });
    x += column.width;
  });
}

/** The packing list of one packed pick batch as a PDF. `compress: false` leaves the text readable in the bytes (tests). */
export async function renderPackingList(input: PackingListInput, options: { compress?: boolean } = {}): Promise<Buffer> {
  const encode = await loadBarcodes();
  const { doc, bytes } = await letterPdf(
    { Title: `Packing list - order ${input.order_number}`, Subject: pdfText(input.batch_number) }, { compress: options.compress ?? true });

  let y = drawTableHeader(doc, drawFirstHeader(doc, encode, input));
  input.lines.forEach((line, index) => {
    const cells = rowCells(line);
    const height = rowHeight(doc, cells);
    if (y + height > BODY_BOTTOM) {
      doc.addPage();
      y = drawTableHeader(doc, drawContinuationHeader(doc, input));
    }
    drawRow(doc, cells, y, height, index % 2 === 1);
    y += height;
  });

  const ordered = input.lines.reduce((sum, line) => sum + line.qty_ordered, 0);
  const packed = input.lines.reduce((sum, line) => sum + line.qty_packed, 0);
  if (y + 24 > BODY_BOTTOM) {
    doc.addPage();
    y = drawContinuationHeader(doc, input);
  }
  doc.moveTo(PAGE.margin, y + 2).lineTo(PAGE.margin + CONTENT_WIDTH, y + 2).lineWidth(0.5).stroke('black');
  doc.font(BOLD).fontSize(ROW_FONT_SIZE).fillColor('black')
    .text(`${input.lines.length} line(s)   Total ordered ${formatQty(ordered)}   Total packed ${formatQty(packed)}`,
      PAGE.margin, y + 7, { width: CONTENT_WIDTH, align: 'right', lineBreak: false });

  drawFooters(doc, `Order ${input.order_number} - ${pdfText(input.batch_number)}`);
  doc.end();
  return bytes;
}
