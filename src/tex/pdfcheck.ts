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

/** A qpdf JSON v2 string ("u:text" or "b:hex") as the text a viewer sees. */
function pdfString(value: string): string {
  if (value.startsWith('u:')) return value.slice(2);
  if (value.startsWith('b:')) {
    const bytes = Buffer.from(value.slice(2), 'hex');
    // UTF-16BE with a byte order mark, else bytes as Latin-1.
    if (bytes[0] === 0xfe && bytes[1] === 0xff) return Buffer.from(bytes.subarray(2)).swap16().toString('utf16le');
    return bytes.toString('latin1');
  }
  return value;
}

/** Browsers ignore case, surrounding blanks and tabs or newlines inside the scheme. */
function scriptScheme(uri: string): boolean {
  const squeezed = uri.replace(/[\u0000-\u0020\u007f-\u00a0]/g, '').toLowerCase();
  return SCRIPT_SCHEMES.some((scheme) => squeezed.startsWith(scheme));
}

/** The active content named by the scan's matches, one description per kind, sorted. */
export function activeContent(scan: string): string[] {
  const found = new Set<string>();
  for (const line of scan.split('\n')) {
    const match = /^"(\/[a-z]+)": *(".*")?$/i.exec(line.trim());
    if (!match) continue;
    const key = match[1]!.toLowerCase();
    let value: string | null = null;
    try {
      value = match[2] ? (JSON.parse(match[2]) as string) : null;
    } catch {
      value = null;
    }
    if (key === '/js') found.add('JavaScript code (/JS)');
    else if (key === '/javascript') found.add('document JavaScript (/Names /JavaScript)');
    else if (key === '/s' && value?.toLowerCase() === '/javascript') found.add('JavaScript action (/S /JavaScript)');
    else if (key === '/s' && value?.toLowerCase() === '/launch') found.add('Launch action (/S /Launch)');
    else if (key === '/uri' && value !== null && scriptScheme(pdfString(value))) {
      found.add(`script URI (${JSON.stringify(pdfString(value).slice(0, 40))})`);
    }
  }
  return [...found].sort();
}
