// In-process inspection of TeX's own PDF: its page count and its active content (see
// pdfcheck.ts), without starting qpdf in the sandbox. The bytes were read link-safely from the
// workspace; this reader only parses them, bounded in depth, objects and inflated bytes. It
// reads the simple, regular files pdfTeX, xdvipdfmx and LuaTeX write (one revision, objects in
// order, object streams with Flate) and gives up (null) on anything else, where the caller falls
// back to qpdf: so it never has to be cleverer than qpdf, only as thorough on what it accepts.
// To see exactly the objects qpdf sees, every object the cross-reference names must be one this
// reader parsed, and no stream it skipped may hide an object header.
import { fail, HIDDEN_HEADER, inflate, isName, Keyword, Lexer, MAX_DEPTH, Name, OBJ_HEADER, objectStream, readKeyword, Ref, streamData, Unreadable, type Obj } from './lexer.js';
import { entryFinding, scannedKey, stringTexts, type PdfValue } from './pdfcheck.js';

/** Largest PDF parsed in-process (larger ones go to qpdf, off the event loop). */
export const READ_MAX_BYTES = 16 * 1024 * 1024;
const INFLATE_BUDGET = 64 * 1024 * 1024;
const MAX_OBJECTS = 200_000;
const MAX_PAGES_VISITED = 1_000_000;

export interface PdfInspection {
  pages: number;
  active: string[];
  /** What the PDF/A structural check reads (output/pdfa-check.ts); only when asked for. */
  pdfa?: PdfaFacts;
}

/** The parts of a PDF the PDF/A structural check looks at, read by this parser. */
export interface PdfaFacts {
  /** The catalog's XMP packet as text, or null without one. */
  xmp: string | null;
  /** Entries of the catalog's /OutputIntents. */
  outputIntents: number;
  /** BaseFont names of fonts without an embedded font program. */
  unembeddedFonts: string[];
}


/**
 * `pdf`'s pages and active content, or null when this reader cannot vouch for what qpdf would
 * see (the caller then asks qpdf).
 */
export function inspectPdf(pdf: Buffer, options: { pdfa?: boolean } = {}): PdfInspection | null {
  if (pdf.length > READ_MAX_BYTES || pdf.toString('latin1', 0, 5) !== '%PDF-') return null;
  try {
    return read(pdf, options.pdfa === true);
  } catch (err) {
    if (err instanceof Unreadable) return null;
    throw err;
  }
}

function read(pdf: Buffer, withPdfa: boolean): PdfInspection {
  const found = new Set<string>();
  const onEntry = (key: string, value: Obj) => {
    if (!scannedKey(key)) return;
    const finding = entryFinding(key, toValue(value));
    if (finding) found.add(finding);
  };
  const objects = new Map<number, Obj>();
  /** Where each object of the file starts (its header), and which object stream holds the rest. */
  const offsets = new Map<number, number>();
  /** Each top-level object's generation (an object stream's objects are generation 0). */
  const generations = new Map<number, number>();
  const inStream = new Map<number, number>();
  const xrefs: Array<{ dict: Map<string, Obj>; data?: Buffer; table?: string }> = [];
  /** The data of each plain stream (the XMP packet is one), kept only for the PDF/A facts. */
  const streams = new Map<Map<string, Obj>, Buffer>();
  const budget = { left: INFLATE_BUDGET };
  const define = (num: number, value: Obj) => {
    if (objects.has(num)) fail('object defined twice (an updated file)');
    if (objects.size >= MAX_OBJECTS) fail('too many objects');
    objects.set(num, value);
  };

  const lex = new Lexer(pdf, 0, onEntry);
  for (;;) {
    lex.skipSpace();
    if (lex.pos >= pdf.length) break;
    const header = OBJ_HEADER.exec(pdf.toString('latin1', lex.pos, Math.min(pdf.length, lex.pos + 64)));
    if (header) {
      const at = lex.pos;
      const num = Number(header[1]);
      lex.pos += header[0].length;
      const value = lex.object();
      if (value instanceof Keyword) fail('keyword as an object');
      lex.skipSpace();
      let word = readKeyword(lex);
      if (word === 'stream') {
        if (!(value instanceof Map)) return fail('stream without a dictionary');
        const data = streamData(lex, value);
        const type = value.get('Type');
        if (isName(type, 'ObjStm')) {
          for (const [n, obj] of objectStream(value, inflate(value, data, budget), onEntry)) {
            define(n, obj);
            inStream.set(n, num);
          }
        } else if (isName(type, 'XRef')) xrefs.push({ dict: value, data: inflate(value, data, budget) });
        else if (HIDDEN_HEADER.test(data.toString('latin1'))) fail('a stream holds an object header');
        else if (withPdfa) streams.set(value, data);
        lex.skipSpace();
        word = readKeyword(lex);
      }
      if (word !== 'endobj') fail(`expected endobj, got ${word}`);
      define(num, value);
      offsets.set(num, at);
      generations.set(num, Number(header[2]));
      continue;
    }
    const word = readKeyword(lex);
    if (word === 'xref') {
      const end = pdf.indexOf('trailer', lex.pos, 'latin1');
      if (end < 0) fail('xref without trailer');
      const table = pdf.toString('latin1', lex.pos, end);
      lex.pos = end + 'trailer'.length;
      const dict = lex.object();
      if (!(dict instanceof Map)) return fail('trailer is not a dictionary');
      xrefs.push({ dict, table });
    } else if (word === 'startxref') {
      lex.object();
    } else fail(`unexpected ${word || `byte ${pdf[lex.pos]}`}`);
  }
  if (xrefs.length !== 1) fail('not exactly one cross-reference section');
  const xref = xrefs[0]!;
  if (xref.dict.has('Encrypt') || xref.dict.has('Prev')) fail('encrypted or updated');
  checkXref(xref, offsets, generations, inStream);

  // A reference whose generation is not its object's names nothing to qpdf (null): give up.
  const resolve = (value: Obj | undefined): Obj | undefined => {
    if (!(value instanceof Ref)) return value;
    if (value.gen !== (generations.get(value.num) ?? 0)) fail(`reference ${value.num} ${value.gen} R names another generation`);
    return objects.get(value.num);
  };
  const catalog = resolve(xref.dict.get('Root'));
  if (!(catalog instanceof Map)) return fail('no catalog');
  let pages = 0;
  let visited = 0;
  const seen = new Set<Map<string, Obj>>();
  const walk = (node: Obj | undefined, depth: number) => {
    if (!(node instanceof Map) || seen.has(node) || depth > MAX_DEPTH || ++visited > MAX_PAGES_VISITED) fail('bad page tree');
    seen.add(node as Map<string, Obj>);
    const kids = resolve((node as Map<string, Obj>).get('Kids'));
    if (isName((node as Map<string, Obj>).get('Type'), 'Pages') || kids !== undefined) {
      if (!Array.isArray(kids)) return fail('page tree node without kids');
      for (const kid of kids) walk(resolve(kid), depth + 1);
    } else pages++;
  };
  walk(resolve(catalog.get('Pages')), 0);
  if (pages < 1) fail('no pages');
  const inspection: PdfInspection = { pages, active: [...found].sort() };
  if (withPdfa) inspection.pdfa = pdfaFacts(catalog, objects, streams, resolve, budget);
  return inspection;
}

function pdfaFacts(
  catalog: Map<string, Obj>,
  objects: Map<number, Obj>,
  streams: Map<Map<string, Obj>, Buffer>,
  resolve: (value: Obj | undefined) => Obj | undefined,
  budget: { left: number },
): PdfaFacts {
  const metadata = resolve(catalog.get('Metadata'));
  let xmp: string | null = null;
  const data = metadata instanceof Map ? streams.get(metadata) : undefined;
  if (metadata instanceof Map && data) xmp = (metadata.has('Filter') ? inflate(metadata, data, budget) : data).toString('utf8');
  const intents = resolve(catalog.get('OutputIntents'));
  const unembeddedFonts: string[] = [];
  for (const value of objects.values()) {
    if (!(value instanceof Map) || !isName(value.get('Type'), 'Font')) continue;
    // A Type 3 font is its own program; a Type 0 font's program is in its descendant, a font too.
    if (isName(value.get('Subtype'), 'Type3') || isName(value.get('Subtype'), 'Type0')) continue;
    const descriptor = resolve(value.get('FontDescriptor'));
    const embedded = descriptor instanceof Map && ['FontFile', 'FontFile2', 'FontFile3'].some((key) => descriptor.has(key));
    const base = value.get('BaseFont');
    if (!embedded) unembeddedFonts.push(base instanceof Name ? base.name : '(unnamed)');
  }
  return { xmp, outputIntents: Array.isArray(intents) ? intents.length : 0, unembeddedFonts: [...new Set(unembeddedFonts)].sort() };
}


/** Every object the cross-reference names as in use is one this reader parsed, where it says. */
function checkXref(
  xref: { dict: Map<string, Obj>; data?: Buffer; table?: string },
  offsets: Map<number, number>,
  generations: Map<number, number>,
  inStream: Map<number, number>,
): void {
  if (xref.table !== undefined) {
    const lines = xref.table.trim().split(/\r\n|\r|\n/).map((l) => l.trim()).filter(Boolean);
    let num = 0;
    for (const line of lines) {
      const sub = /^(\d+) (\d+)$/.exec(line);
      if (sub) {
        num = Number(sub[1]);
        continue;
      }
      const entry = /^(\d{10}) (\d{5}) ([nf])$/.exec(line);
      if (!entry) fail('xref line');
      if (entry![3] === 'n' && (offsets.get(num) !== Number(entry![1]) || generations.get(num) !== Number(entry![2]))) fail(`xref names object ${num} where none was read`);
      num++;
    }
    return;
  }
  const w = xref.dict.get('W');
  const size = xref.dict.get('Size');
  if (!Array.isArray(w) || w.length !== 3 || !w.every((x) => typeof x === 'number' && x >= 0 && x <= 8) || typeof size !== 'number') fail('xref stream W');
  const [w0, w1, w2] = w as number[];
  const index = xref.dict.get('Index') ?? [0, size];
  if (!Array.isArray(index) || index.length % 2 || !index.every((x) => typeof x === 'number')) return fail('xref stream Index');
  const data = xref.data!;
  const width = w0! + w1! + w2!;
  const field = (at: number, len: number, dflt: number) => {
    if (len === 0) return dflt;
    let v = 0;
    for (let i = 0; i < len; i++) v = v * 256 + data[at + i]!;
    return v;
  };
  let row = 0;
  for (let i = 0; i < index.length; i += 2) {
    for (let k = 0; k < (index[i + 1] as number); k++, row++) {
      const at = row * width;
      if (at + width > data.length) fail('xref stream too short');
      const num = (index[i] as number) + k;
      const type = field(at, w0!, 1);
      const a = field(at + w0!, w1!, 0);
      if (type === 1 && (offsets.get(num) !== a || generations.get(num) !== field(at + w0! + w1!, w2!, 0))) fail(`xref names object ${num} where none was read`);
      if (type === 2 && inStream.get(num) !== a) fail(`xref names object ${num} in a stream where it was not read`);
      if (type > 2) fail('xref entry type');
    }
  }
}

/** A parsed value as the scan needs it: names and strings (text), nothing else. */
function toValue(value: Obj): PdfValue {
  if (value instanceof Name) return { kind: 'name', text: value.name };
  if (Buffer.isBuffer(value)) return { kind: 'string', texts: stringTexts(value) };
  return null;
}
