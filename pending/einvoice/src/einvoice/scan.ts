// The safe read of an uploaded invoice XML, before any XML parser sees it (issue 41 item 3, issue
// 37): a bounded size, UTF-8 only, no DOCTYPE or ENTITY declaration (so no entity expansion, no
// external entity, no DTD fetch can happen in libxml2 or saxon-js), no entity reference but the
// five XML predefines and character references, and a bounded element depth. One linear pass;
// then the root element says which syntax it is (CII or UBL) and the guideline / customization id
// which profile the document declares.

/** Largest invoice XML taken (bytes): real invoices are 5-200 KB, a thousand-line one under 2 MB. */
export const XML_MAX_BYTES = 2 * 1024 * 1024;
/** Deepest element nesting taken: CII nests about 10 deep, UBL about 8. */
export const XML_MAX_DEPTH = 64;

export type RefusalReason = 'too_large' | 'encoding' | 'doctype' | 'entity' | 'too_deep' | 'not_well_formed' | 'not_an_invoice';

/** Why an XML is refused; validate.ts turns it into einvoice_xml_refused. */
export interface XmlRefusal {
  reason: RefusalReason;
  message: string;
  limit?: number;
  line?: number;
}

export interface ScannedXml {
  text: string;
  syntax: 'CII' | 'UBL';
  /** UBL: Invoice or CreditNote. */
  root: string;
  /** BT-24: the CII guideline id or the UBL CustomizationID, as written. */
  specification: string | null;
}

const NS_CII = 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100';
const NS_UBL_INVOICE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2';
const NS_UBL_CREDIT = 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2';
const PREDEFINED = new Set(['lt', 'gt', 'amp', 'quot', 'apos']);

/** Reads `input` safely; answers the text with its syntax, or why it is refused. */
export function scanInvoiceXml(input: string | Uint8Array): ScannedXml | XmlRefusal {
  const size = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength;
  if (size > XML_MAX_BYTES) return { reason: 'too_large', message: `The XML is ${size} bytes; at most ${XML_MAX_BYTES} are taken.`, limit: XML_MAX_BYTES };
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(input);
    } catch {
      return { reason: 'encoding', message: 'The XML is not UTF-8.' };
    }
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const declared = /^<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']/.exec(text)?.[1];
  if (declared && !/^(utf-?8|us-ascii)$/i.test(declared)) return { reason: 'encoding', message: `The XML declares encoding "${declared}"; send it as UTF-8.` };
  const walked = walk(text);
  if ('reason' in walked) return walked;
  return identify(text, walked.rootTag);
}

/** The one pass: markup declarations, entity references and depth; answers the root start tag. */
function walk(text: string): { rootTag: string } | XmlRefusal {
  let depth = 0;
  let rootTag: string | null = null;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x26 /* & */) {
      const bad = entityReference(text, i);
      if (bad) return { reason: 'entity', message: `The XML uses the entity reference "&${bad};"; only the five XML entities and character references are taken.`, line: lineOf(text, i) };
      i++;
      continue;
    }
    if (c !== 0x3c /* < */) {
      i++;
      continue;
    }
    if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4);
      if (end === -1) return malformed(text, i, 'an unclosed comment');
      i = end + 3;
    } else if (text.startsWith('<![CDATA[', i)) {
      const end = text.indexOf(']]>', i + 9);
      if (end === -1) return malformed(text, i, 'an unclosed CDATA section');
      i = end + 3;
    } else if (text.startsWith('<?', i)) {
      const end = text.indexOf('?>', i + 2);
      if (end === -1) return malformed(text, i, 'an unclosed processing instruction');
      i = end + 2;
    } else if (text.startsWith('<!', i)) {
      // DOCTYPE, ENTITY, ELEMENT, ATTLIST, NOTATION: no invoice needs one, and each is how an
      // entity bomb or an external entity gets in.
      const what = /^<!([A-Za-z]*)/.exec(text.slice(i, i + 12))?.[1] ?? '';
      return { reason: 'doctype', message: `The XML carries a <!${what}> declaration; DOCTYPE and ENTITY declarations are refused.`, line: lineOf(text, i) };
    } else if (text.charCodeAt(i + 1) === 0x2f /* / */) {
      depth--;
      const end = text.indexOf('>', i);
      if (end === -1) return malformed(text, i, 'an unclosed end tag');
      i = end + 1;
    } else {
      const end = tagEnd(text, i);
      if (end === -1) return malformed(text, i, 'an unclosed start tag');
      if (rootTag === null) rootTag = text.slice(i, end + 1);
      else if (depth === 0) return malformed(text, i, 'a second root element');
      if (text.charCodeAt(end - 1) !== 0x2f) {
        depth++;
        if (depth > XML_MAX_DEPTH) return { reason: 'too_deep', message: `The XML nests elements deeper than ${XML_MAX_DEPTH} levels.`, limit: XML_MAX_DEPTH, line: lineOf(text, i) };
      }
      i = end + 1;
    }
  }
  if (rootTag === null) return { reason: 'not_well_formed', message: 'The text has no XML element.' };
  return { rootTag };
}

/** The index of the `>` closing the start tag at `start`, skipping quoted attribute values. */
function tagEnd(text: string, start: number): number {
  let quote = 0;
  for (let j = start + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (quote) {
      if (c === quote) quote = 0;
    } else if (c === 0x22 || c === 0x27) {
      quote = c;
    } else if (c === 0x3e) {
      return j;
    } else if (c === 0x3c) {
      return -1;
    }
  }
  return -1;
}

/** The name of an entity reference at `at` that is not predefined nor a character reference, else null. */
function entityReference(text: string, at: number): string | null {
  const m = /^&(#x[0-9A-Fa-f]+|#[0-9]+|[A-Za-z_:][\w.:-]*);/.exec(text.slice(at, at + 80));
  if (!m) return null; // a bare & is the parser's well-formedness error, not an entity
  const name = m[1]!;
  return name.startsWith('#') || PREDEFINED.has(name) ? null : name;
}

function identify(text: string, rootTag: string): ScannedXml | XmlRefusal {
  const name = /^<([^\s/>]+)/.exec(rootTag)?.[1] ?? '';
  const colon = name.indexOf(':');
  const prefix = colon === -1 ? '' : name.slice(0, colon);
  const local = colon === -1 ? name : name.slice(colon + 1);
  const nsAttr = prefix ? `xmlns:${prefix}` : 'xmlns';
  const ns = new RegExp(`\\s${nsAttr.replace(':', '\\:')}\\s*=\\s*(["'])([^"']*)\\1`).exec(rootTag)?.[2] ?? '';
  if (local === 'CrossIndustryInvoice' && ns === NS_CII) {
    const id = /<(?:[\w.-]+:)?GuidelineSpecifiedDocumentContextParameter\b[^>]*>\s*<(?:[\w.-]+:)?ID\b[^>]*>([^<]*)</.exec(text)?.[1];
    return { text, syntax: 'CII', root: local, specification: id?.trim() ?? null };
  }
  if ((local === 'Invoice' && ns === NS_UBL_INVOICE) || (local === 'CreditNote' && ns === NS_UBL_CREDIT)) {
    const id = /<(?:[\w.-]+:)?CustomizationID\b[^>]*>([^<]*)</.exec(text)?.[1];
    return { text, syntax: 'UBL', root: local, specification: id?.trim() ?? null };
  }
  return {
    reason: 'not_an_invoice',
    message: `The root element is {${ns}}${local}; a CII invoice (rsm:CrossIndustryInvoice) or a UBL Invoice or CreditNote is expected.`,
  };
}

function malformed(text: string, at: number, what: string): XmlRefusal {
  return { reason: 'not_well_formed', message: `The XML is not well-formed: ${what}.`, line: lineOf(text, at) };
}

function lineOf(text: string, at: number): number {
  let line = 1;
  for (let j = text.indexOf('\n'); j !== -1 && j < at; j = text.indexOf('\n', j + 1)) line++;
  return line;
}
