// What a document file really is: the type comes from its bytes (file-type), never from what the client says; a
// declared type or file name extension that contradicts the bytes is refused.
import { fileTypeFromBuffer } from 'file-type';
import { unsupportedMediaType } from '../../domain/errors.ts';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

interface AcceptedType {
  /** File name extensions that name this type. */
  extensions: readonly string[];
  /** Declared types (part Content-Type) that agree with it besides itself. */
  alsoDeclaredAs: readonly string[];
}

/** The types a document may have, by the type stored as its file_type. */
export const ACCEPTED_TYPES: Record<string, AcceptedType> = {
  'application/pdf': { extensions: ['pdf'], alsoDeclaredAs: ['application/x-pdf', 'application/acrobat'] },
  'image/png': { extensions: ['png'], alsoDeclaredAs: ['image/x-png'] },
  'image/jpeg': { extensions: ['jpg', 'jpeg', 'jpe', 'jfif'], alsoDeclaredAs: ['image/jpg', 'image/pjpeg'] },
  'image/gif': { extensions: ['gif'], alsoDeclaredAs: [] },
  'image/webp': { extensions: ['webp'], alsoDeclaredAs: [] },
  'image/tiff': { extensions: ['tif', 'tiff'], alsoDeclaredAs: ['image/tif'] },
  'image/heic': { extensions: ['heic'], alsoDeclaredAs: ['image/heif', 'image/heic-sequence'] },
  'image/heif': { extensions: ['heif'], alsoDeclaredAs: ['image/heic', 'image/heif-sequence'] },
  // Windows browsers declare CSV files as Excel's type; some tools call them plain text.
  'text/csv': {
    extensions: ['csv'],
    alsoDeclaredAs: ['text/plain', 'application/csv', 'text/comma-separated-values', 'text/x-csv', 'application/vnd.ms-excel'],
  },
  'text/plain': { extensions: ['txt', 'text', 'log', 'tsv'], alsoDeclaredAs: ['text/csv', 'text/tab-separated-values'] },
  [XLSX]: { extensions: ['xlsx'], alsoDeclaredAs: ['application/zip', 'application/x-zip-compressed'] },
  [DOCX]: { extensions: ['docx'], alsoDeclaredAs: ['application/zip', 'application/x-zip-compressed'] },
};

// Text is CSV when its name or its declared type says so, else plain text.
const CSV_DECLARED = new Set(['text/csv', 'application/csv', 'text/comma-separated-values', 'text/x-csv', 'application/vnd.ms-excel']);

// Declared by clients that do not know the type: they claim nothing. The multipart parser reports a file part sent
// without a Content-Type as text/plain, so text/plain cannot be told from no claim either.
const NO_CLAIM = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/binary', 'application/unknown', 'text/plain']);

// Names a downloader's system would run or render as a page, whatever the bytes: refused outright.
const DANGEROUS_EXTENSIONS = new Set([
  'exe', 'dll', 'com', 'scr', 'msi', 'msp', 'bat', 'cmd', 'ps1', 'vbs', 'vbe', 'js', 'mjs', 'jse', 'wsf', 'hta', 'lnk',
  'jar', 'sh', 'app', 'apk', 'html', 'htm', 'xhtml', 'shtml', 'svg', 'xml', 'php', 'reg', 'cpl',
]);

const OWNER_OF_EXTENSION = new Map(
  Object.entries(ACCEPTED_TYPES).flatMap(([type, accepted]) => accepted.extensions.map((ext) => [ext, type] as const)),
);

const TEXT_DECODER = new TextDecoder('utf-8', { fatal: true });
// C0 controls other than tab, line feed, form feed and carriage return, and DEL: such bytes make a file binary.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/;

/** UTF-8 text without control characters, and not markup (HTML, XML, SVG), else null. */
function textKind(bytes: Uint8Array): 'text' | 'markup' | null {
  let text: string;
  try {
    text = TEXT_DECODER.decode(bytes);
  } catch {
    return null;
  }
  if (CONTROL_CHARACTERS.test(text)) return null;
  // A browser that sniffs would render a text file that opens with a tag as a page.
  return /^\s*</.test(text.replace(/^\uFEFF/, '')) ? 'markup' : 'text';
}

const essence = (type: string) => type.split(';')[0]!.trim().toLowerCase();

function extensionOf(fileName: string): string | null {
  const match = /\.([^.]+)$/.exec(fileName);
  return match ? match[1]!.toLowerCase() : null;
}

/**
 * The type of the file, one of ACCEPTED_TYPES, read from its bytes. 415 unsupported_media_type when the bytes are of
 * no accepted type, or when the declared type or the name's extension says something else than the bytes.
 */
export async function sniffFileType(bytes: Uint8Array, fileName: string, declaredType: string): Promise<string> {
  const declared = essence(declaredType);
  const extension = extensionOf(fileName);
  if (extension && DANGEROUS_EXTENSIONS.has(extension)) throw unsupportedMediaType(`files named .${extension} are not accepted`);

  const detected = await fileTypeFromBuffer(bytes);
  let type: string;
  if (detected) {
    if (!ACCEPTED_TYPES[detected.mime]) throw unsupportedMediaType(`the file is ${detected.mime} (.${detected.ext}), which is not an accepted document type`);
    type = detected.mime;
  } else {
    const kind = textKind(bytes);
    if (kind === null) throw unsupportedMediaType('the file is of an unrecognised binary type, which is not an accepted document type');
    if (kind === 'markup') throw unsupportedMediaType('the file is HTML or XML markup, which is not an accepted document type');
    type = extension === 'csv' || CSV_DECLARED.has(declared) ? 'text/csv' : 'text/plain';
  }

  const accepted = ACCEPTED_TYPES[type]!;
  if (!NO_CLAIM.has(declared) && declared !== type && !accepted.alsoDeclaredAs.includes(declared)) {
    throw unsupportedMediaType(`the file was declared as ${declared} but its content is ${type}`);
  }
  const owner = extension ? OWNER_OF_EXTENSION.get(extension) : undefined;
  if (owner && owner !== type && !accepted.alsoDeclaredAs.includes(owner)) {
    throw unsupportedMediaType(`the file is named .${extension} but its content is ${type}`);
  }
  return type;
}

/** Every accepted type, for the API description. */
export const ACCEPTED_TYPE_LIST = Object.keys(ACCEPTED_TYPES);
