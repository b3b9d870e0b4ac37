// The consignor statement as a PDF a supply partner can file: per item, opening balance, the period's movements with
// reason and who, and closing balance. Letter size, pdfkit's built-in Helvetica (as the packing list).
import { BODY_BOTTOM, BOLD, CONTENT_WIDTH, drawFooters, FONT, letterPdf, PAGE, pdfText, type Pdf } from '../documents/pdf.ts';
import type { Statement } from './statement.ts';

const ROW = 12;
const COLUMNS = [
  { title: 'Date (UTC)', width: 78, align: 'left' },
  { title: 'Movement', width: 96, align: 'left' },
  { title: 'Qty', width: 52, align: 'right' },
  { title: 'On hand', width: 56, align: 'right' },
  { title: 'Reason / reference', width: 180, align: 'left' },
  { title: 'By', width: 78, align: 'left' },
] as const;

const qty = (n: number) => n.toLocaleString('en-US');
const signed = (n: number) => (n > 0 ? `+${qty(n)}` : qty(n));
const when = (at: Date | string) => new Date(at).toISOString().slice(0, 16).replace('T', ' ');

function cells(doc: Pdf, values: string[], y: number, bold = false) {
  doc.font(bold ? BOLD : FONT).fontSize(8).fillColor('black');
  let x = PAGE.margin;
  COLUMNS.forEach((column, i) => {
    doc.text(values[i] ?? '', x + 2, y, { width: column.width - 4, height: ROW, align: column.align, ellipsis: true, lineBreak: false });
    x += column.width;
  });
}

export async function renderStatement(statement: Statement, page: { page: number; total_pages: number }): Promise<Buffer> {
  const { doc, bytes } = await letterPdf({ Title: `Statement ${statement.manufacturer.code} ${statement.from} to ${statement.to}` });

  let y = PAGE.margin;
  const room = (height: number) => {
    if (y + height <= BODY_BOTTOM) return;
    doc.addPage();
    y = PAGE.margin;
  };
  doc.font(BOLD).fontSize(18).text('CONSIGNED STOCK STATEMENT', PAGE.margin, y, { lineBreak: false });
  y += 26;
  doc.font(FONT).fontSize(10)
    .text(pdfText(`${statement.manufacturer.name} (${statement.manufacturer.code})`), PAGE.margin, y, { lineBreak: false })
    .text(`Period ${statement.from} to ${statement.to} (UTC)`, PAGE.margin, y + 13, { lineBreak: false })
    .text(`Generated ${when(statement.generated_at)} UTC`, PAGE.margin, y + 26, { lineBreak: false });
  const t = statement.totals;
  doc.text(`Items: ${qty(t.items)}   On hand: ${qty(t.opening_on_hand)} -> ${qty(t.closing_on_hand)}   Quarantine: ${qty(t.opening_quarantine)} -> ${qty(t.closing_quarantine)}`,
    PAGE.margin, y + 39, { lineBreak: false });
  if (page.total_pages > 1) doc.text(`Items page ${page.page} of ${page.total_pages}`, PAGE.margin, y + 52, { lineBreak: false });
  y += 72;

  for (const item of statement.items) {
    room(ROW * 4);
    doc.rect(PAGE.margin, y, CONTENT_WIDTH, ROW + 4).fill('#e6e6e6');
    doc.font(BOLD).fontSize(9).fillColor('black')
      .text(pdfText(`${item.item_number_display} - ${item.description}`), PAGE.margin + 2, y + 3, { width: CONTENT_WIDTH - 4, ellipsis: true, lineBreak: false });
    y += ROW + 6;
    cells(doc, COLUMNS.map((column) => column.title), y, true);
    y += ROW;
    cells(doc, [statement.from, 'Opening balance', '', qty(item.opening_on_hand), item.opening_quarantine ? `quarantine ${qty(item.opening_quarantine)}` : '', ''], y);
    y += ROW;
    for (const movement of item.movements) {
      room(ROW * 2);
      const quarantine = movement.inventory_status === 'quarantine';
      cells(doc, [
        when(movement.performed_at), `${movement.movement_type}${quarantine ? ' (quarantine)' : ''}`, signed(movement.quantity),
        quarantine ? '' : qty(movement.balance_after), pdfText([movement.reason, movement.location_code].filter(Boolean).join(' - ')),
        pdfText(movement.performed_by_name),
      ], y);
      y += ROW;
    }
    room(ROW * 2);
    cells(doc, [statement.to, 'Closing balance', '', qty(item.closing_on_hand), item.closing_quarantine ? `quarantine ${qty(item.closing_quarantine)}` : '', ''], y, true);
    y += ROW + 8;
  }
  if (statement.items.length === 0) doc.font(FONT).fontSize(10).text('No stock and no movements in this period.', PAGE.margin, y, { lineBreak: false });

  drawFooters(doc, pdfText(`${statement.manufacturer.code} statement ${statement.from} to ${statement.to}`));
  doc.end();
  return bytes;
}
