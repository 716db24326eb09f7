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
export const SCAN_PATTERN = '"/(s|js|javascript|uri)": *("([^"\\\\]|\\\\.)*")?';

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

/** A string's bytes as the texts a viewer may see: UTF-16BE with a byte order mark, and Latin-1. */
export function stringTexts(bytes: Buffer): string[] {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return [Buffer.from(bytes.subarray(2)).swap16().toString('utf16le'), bytes.toString('latin1')];
  return [bytes.toString('latin1')];
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
