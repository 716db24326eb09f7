// What a delivered PDF may not carry: JavaScript (actions, the /JavaScript name tree, /JS
// anywhere), /Launch actions and script URIs. Decided on qpdf's JSON view of every object
// (`qpdf --json=2 --json-key=qpdf --json-key=pages`), where qpdf has already decoded the
// spellings a filter could miss: name escapes (/Java#53cript is "/JavaScript") and string
// escapes (octal \152, hex <6a61…>, UTF-16) are all plain text there.

/** How one page count and the active content of a PDF read from qpdf's JSON. */
export interface PdfInspection {
  pages: number | null;
  /** Active content found, described for the caller ("JavaScript action (/S /JavaScript)"). */
  active: string[];
}

/** URI schemes that run code in a viewer or browser. */
const SCRIPT_SCHEMES = ['javascript:', 'vbscript:'];

/** A qpdf JSON v2 string ("u:text" or "b:hex") as the bytes a viewer sees, lowercased. */
function pdfString(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  if (value.startsWith('u:')) return value.slice(2);
  if (value.startsWith('b:')) {
    const bytes = Buffer.from(value.slice(2), 'hex');
    // UTF-16BE with a byte order mark, else bytes as Latin-1.
    if (bytes[0] === 0xfe && bytes[1] === 0xff) return bytes.subarray(2).swap16().toString('utf16le');
    return bytes.toString('latin1');
  }
  return null;
}

/** Browsers ignore case, surrounding blanks and tabs or newlines inside the scheme. */
function scriptScheme(uri: string): boolean {
  const squeezed = uri.replace(/[\u0000-\u0020\u007f-\u00a0]/g, '').toLowerCase();
  return SCRIPT_SCHEMES.some((scheme) => squeezed.startsWith(scheme));
}

const nameIs = (value: unknown, name: string) => typeof value === 'string' && value.toLowerCase() === name.toLowerCase();

function inspectDict(dict: Record<string, unknown>, found: Set<string>): void {
  const action = dict['/S'];
  if (nameIs(action, '/JavaScript')) found.add('JavaScript action (/S /JavaScript)');
  if (nameIs(action, '/Launch')) found.add('Launch action (/S /Launch)');
  if (Object.keys(dict).some((key) => nameIs(key, '/JS'))) found.add('JavaScript code (/JS)');
  const uri = pdfString(dict['/URI']);
  if (uri !== null && scriptScheme(uri)) found.add(`script URI (${JSON.stringify(uri.slice(0, 40))})`);
  // Only the catalog's name dictionary has a /JavaScript key (its document-level scripts).
  if (Object.keys(dict).some((key) => nameIs(key, '/JavaScript'))) found.add('document JavaScript (/Names /JavaScript)');
}

/** Walks every value without recursion, so a deeply nested object cannot overflow the stack. */
function walk(root: unknown, found: Set<string>): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (const item of value) if (item && typeof item === 'object') stack.push(item);
    } else if (value && typeof value === 'object') {
      const dict = value as Record<string, unknown>;
      inspectDict(dict, found);
      for (const item of Object.values(dict)) if (item && typeof item === 'object') stack.push(item);
    }
  }
}

/** Reads qpdf's JSON (version 2) of a PDF; throws when it is not qpdf JSON. */
export function inspectPdfJson(json: string): PdfInspection {
  const doc = JSON.parse(json) as { pages?: unknown; qpdf?: unknown };
  if (!doc || typeof doc !== 'object' || !Array.isArray(doc.qpdf)) throw new Error('not qpdf JSON');
  const found = new Set<string>();
  walk(doc.qpdf, found);
  return { pages: Array.isArray(doc.pages) ? doc.pages.length : null, active: [...found].sort() };
}
