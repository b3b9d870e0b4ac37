// Minimal XLSX workbooks for tests: inline-string and number cells, optional formulas, written with fflate; sheets may be
// stored outside xl/worksheets/ (the workbook relationships say where), as some writers and crafted files do.
import { strToU8, zipSync } from 'fflate';

type Cell = string | number | null | { formula: string; value: number };

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function columnLetters(index: number): string {
  let n = index + 1;
  let letters = '';
  while (n > 0) {
    const rest = (n - 1) % 26;
    letters = String.fromCharCode(65 + rest) + letters;
    n = Math.floor((n - 1) / 26);
  }
  return letters;
}

function cellXml(cell: Cell, ref: string): string {
  if (cell === null) return '';
  if (typeof cell === 'number') return `<c r="${ref}"><v>${cell}</v></c>`;
  if (typeof cell === 'string') return `<c r="${ref}" t="inlineStr"><is><t>${escapeXml(cell)}</t></is></c>`;
  return `<c r="${ref}"><f>${escapeXml(cell.formula)}</f><v>${cell.value}</v></c>`;
}

export function sheetXml(rows: Cell[][], extraCells = ''): string {
  const body = rows.map((row, r) => `<row r="${r + 1}">${row.map((cell, c) => cellXml(cell, `${columnLetters(c)}${r + 1}`)).join('')}</row>`).join('');
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${body}${extraCells}</sheetData></worksheet>`;
}

/**
 * A workbook with the given sheets (name -> rows); `extraCells` is raw XML appended to the first sheet's data;
 * `sheetDir` is the folder under xl/ the sheets are stored in (default worksheets); `extraParts` are more parts (path ->
 * XML) that nothing names.
 */
export function xlsxFile(
  sheets: Record<string, Cell[][]>, options: { extraCells?: string; sheetDir?: string; extraParts?: Record<string, string> } = {},
): Buffer {
  const names = Object.keys(sheets);
  const sheetDir = options.sheetDir ?? 'worksheets';
  const files: Record<string, Uint8Array> = {
    '[Content_Types].xml': strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>${names.map((_, i) => `<Override PartName="/xl/${sheetDir}/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`).join('')}</Types>`),
    '_rels/.rels': strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`),
    'xl/workbook.xml': strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>${names.map((name, i) => `<sheet name="${escapeXml(name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('')}</sheets></workbook>`),
    'xl/_rels/workbook.xml.rels': strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${names.map((_, i) => `<Relationship Id="rId${i + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="${sheetDir}/sheet${i + 1}.xml"/>`).join('')}</Relationships>`),
  };
  names.forEach((name, i) => {
    files[`xl/${sheetDir}/sheet${i + 1}.xml`] = strToU8(sheetXml(sheets[name]!, i === 0 ? options.extraCells : ''));
  });
  for (const [path, xml] of Object.entries(options.extraParts ?? {})) files[path] = strToU8(xml);
  return Buffer.from(zipSync(files));
}

/** A zip whose one XML part inflates to `bytes` of spaces: a compression bomb in small. */
export function inflatingZip(bytes: number): Buffer {
  return Buffer.from(zipSync({ 'xl/worksheets/sheet1.xml': new Uint8Array(bytes).fill(32) }, { level: 9 }));
}
