// What a delivered PDF may not carry: JavaScript (actions, the /JavaScript name tree, /JS
// anywhere), /Launch actions and script URIs. qpdf writes its JSON view of every object
// (`qpdf --json=2 --json-key=qpdf`) inside the sandbox, where qpdf has already decoded the
// spellings a filter could miss: name escapes (/Java#53cript is "/JavaScript") and string
// escapes (octal \152, hex <6a61…>, UTF-16) are plain JSON there. grep, also in the sandbox,
// keeps only the entries that matter (SCAN_PATTERN), so the host never parses a whole PDF's
// JSON on its event loop: it reads back a small list of `"/Key": "value"` matches.

/**
 * The dictionary entries looked at, as qpdf's JSON spells them (`"/Key": value`): actions'
 * types (/S), JavaScript code (/JS), the name tree of document scripts (/JavaScript) and
 * URIs, each with its string value when it has one. For `grep -E -i -o`.
 */
const SCANNED_KEYS = 's|js|javascript|uri';
export const SCAN_PATTERN = `"/(${SCANNED_KEYS})": *("([^"\\\\]|\\\\.)*")?`;

/** Whether a dictionary key (without its slash) is one the scan looks at: only those values are decoded. */
const SCANNED_KEY = new RegExp(`^(?:${SCANNED_KEYS})$`, 'i');
export const scannedKey = (key: string): boolean => SCANNED_KEY.test(key);

/** URI schemes that run code in a viewer or browser. */
const SCRIPT_SCHEMES = ['javascript:', 'vbscript:'];

/** Browsers ignore case, surrounding blanks and tabs or newlines inside the scheme. */
function scriptScheme(uri: string): boolean {
  const squeezed = uri.replace(/[\u0000-\u0020\u007f-\u00a0]/g, '').toLowerCase();
  return SCRIPT_SCHEMES.some((scheme) => squeezed.startsWith(scheme));
}

/**
 * A dictionary value as the scan reads it: a name (without its slash, escapes decoded) or a
 * string's bytes; anything else is null.
 */
export type PdfValue = { kind: 'name'; text: string } | { kind: 'string'; texts: string[] } | null;

/** PDFDocEncoding where it is not Latin-1: 0x18–0x1F (accents) and 0x7F–0xA0 (typographic). */
const PDF_DOC_LOW = [0x02d8, 0x02c7, 0x02c6, 0x02d9, 0x02dd, 0x02db, 0x02da, 0x02dc];
const PDF_DOC_HIGH = [
  0xfffd, 0x2022, 0x2020, 0x2021, 0x2026, 0x2014, 0x2013, 0x0192, 0x2044, 0x2039, 0x203a, 0x2212, 0x2030, 0x201e, 0x201c, 0x201d, 0x2018,
  0x2019, 0x201a, 0x2122, 0xfb01, 0xfb02, 0x0141, 0x0152, 0x0160, 0x0178, 0x017d, 0x0131, 0x0142, 0x0153, 0x0161, 0x017e, 0xfffd, 0x20ac,
];

function pdfDocText(bytes: Buffer): string {
  let text = '';
  for (const b of bytes) {
    const code = b >= 0x18 && b <= 0x1f ? PDF_DOC_LOW[b - 0x18]! : b >= 0x7f && b <= 0xa0 ? PDF_DOC_HIGH[b - 0x7f]! : b;
    text += String.fromCharCode(code);
  }
  return text;
}

/**
 * A string's bytes as the texts a viewer may see, the one qpdf's JSON shows first (so both
 * readers name a finding alike): UTF-16 with a byte order mark (big-endian as PDF says, and
 * little-endian, which qpdf also reads), UTF-8 with one (PDF 2.0), PDFDocEncoding; and Latin-1.
 */
export function stringTexts(bytes: Buffer): string[] {
  const latin1 = bytes.toString('latin1');
  // An odd last byte is no character (qpdf drops it too).
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return [Buffer.from(bytes.subarray(2, bytes.length - (bytes.length % 2))).swap16().toString('utf16le'), latin1];
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return [bytes.subarray(2).toString('utf16le'), latin1];
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return [bytes.subarray(3).toString('utf8'), latin1];
  return [pdfDocText(bytes), latin1];
}

/**
 * What one dictionary entry (`key` without its slash, escapes decoded) makes active, or null:
 * shared by the qpdf scan here and the in-process reader (pdfread.ts). Keys and action names
 * compare without case, as the scan of qpdf's JSON always has.
 */
export function entryFinding(key: string, value: PdfValue): string | null {
  const k = key.toLowerCase();
  if (k === 'js') return 'JavaScript code (/JS)';
  if (k === 'javascript') return 'document JavaScript (/Names /JavaScript)';
  if (k === 's' && value?.kind === 'name' && value.text.toLowerCase() === 'javascript') return 'JavaScript action (/S /JavaScript)';
  if (k === 's' && value?.kind === 'name' && value.text.toLowerCase() === 'launch') return 'Launch action (/S /Launch)';
  if (k === 'uri' && value?.kind === 'string') {
    const text = value.texts.find(scriptScheme);
    if (text !== undefined) return `script URI (${JSON.stringify(text.slice(0, 40))})`;
  }
  return null;
}

/** A qpdf JSON v2 value ("/Name", "u:text", "b:hex") as the scan reads it. */
function jsonValue(value: string): PdfValue {
  if (value.startsWith('/')) return { kind: 'name', text: value.slice(1) };
  if (value.startsWith('u:')) return { kind: 'string', texts: [value.slice(2)] };
  if (value.startsWith('b:')) return { kind: 'string', texts: stringTexts(Buffer.from(value.slice(2), 'hex')) };
  return null;
}

/** The active content named by the scan's matches, one description per kind, sorted. */
export function activeContent(scan: string): string[] {
  const found = new Set<string>();
  for (const line of scan.split('\n')) {
    const match = /^"\/([a-z]+)": *(".*")?$/i.exec(line.trim());
    if (!match) continue;
    let value: PdfValue = null;
    try {
      value = match[2] ? jsonValue(JSON.parse(match[2]) as string) : null;
    } catch {
      value = null;
    }
    const finding = entryFinding(match[1]!, value);
    if (finding) found.add(finding);
  }
  return [...found].sort();
}
