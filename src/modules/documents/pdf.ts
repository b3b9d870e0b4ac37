// What every PDF the service renders shares: a US Letter page with 36 pt margins in pdfkit's built-in Helvetica,
// text reduced to the fonts' WinAnsi, the bytes collected into one Buffer, and "Page n of m" footers.
import type PDFDocumentClass from 'pdfkit';

export type Pdf = InstanceType<typeof PDFDocumentClass>;

export const PAGE = { width: 612, height: 792, margin: 36 };
export const CONTENT_WIDTH = PAGE.width - 2 * PAGE.margin;
export const FOOTER_HEIGHT = 24;
export const BODY_BOTTOM = PAGE.height - PAGE.margin - FOOTER_HEIGHT;
export const FONT = 'Helvetica';
export const BOLD = 'Helvetica-Bold';

// The standard fonts speak WinAnsi (Latin-1 plus a few signs): other characters lose their accents or become "?".
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');
const inWinAnsi = (c: string) => {
  const code = c.codePointAt(0)!;
  return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.has(c);
};
export function pdfText(text: string): string {
  let out = '';
  for (const c of text.replace(/[\t\r\n]+/g, ' ')) {
    if (inWinAnsi(c)) out += c;
    else {
      const plain = c.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
      out += plain && [...plain].every(inWinAnsi) ? plain : '?';
    }
  }
  return out;
}

// Loaded on the first PDF, not at start: most processes (and test files) never render one.
let pdfkit: Promise<typeof PDFDocumentClass> | null = null;
const loadPdfKit = () => (pdfkit ??= import('pdfkit').then((module) => module.default));

/** A new buffered Letter document and the promise of its bytes, resolved once `doc.end()` is called. */
export async function letterPdf(info: Record<string, string>, options: { compress?: boolean } = {}): Promise<{ doc: Pdf; bytes: Promise<Buffer> }> {
  const PDFDocument = await loadPdfKit();
  const doc = new PDFDocument({ size: 'LETTER', margin: PAGE.margin, bufferPages: true, compress: options.compress ?? true, info: { Creator: 'Consignment WMS', ...info } });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const bytes = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  return { doc, bytes };
}

/** On every page: `left` at the bottom left, "Page n of m" at the bottom right. */
export function drawFooters(doc: Pdf, left: string): void {
  const { start, count } = doc.bufferedPageRange();
  for (let i = start; i < start + count; i++) {
    doc.switchToPage(i);
    // Below the bottom margin: pdfkit would otherwise start a new page for the footer.
    doc.page.margins.bottom = 0;
    doc.font(FONT).fontSize(8).fillColor('#555555');
    const y = PAGE.height - PAGE.margin - 10;
    doc.text(left, PAGE.margin, y, { lineBreak: false });
    doc.text(`Page ${i - start + 1} of ${count}`, PAGE.margin, y, { width: CONTENT_WIDTH, align: 'right', lineBreak: false });
  }
}
