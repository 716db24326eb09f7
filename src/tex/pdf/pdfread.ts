// In-process inspection of TeX's own PDF: its page count and its active content (see
// pdfcheck.ts), without starting qpdf in the sandbox. The bytes were read link-safely from the
// workspace; this reader only parses them, bounded in depth, objects and inflated bytes. It
// reads the simple, regular files pdfTeX, xdvipdfmx and LuaTeX write (one revision, objects in
// order, object streams with Flate) and gives up (null) on anything else, where the caller falls
// back to qpdf: so it never has to be cleverer than qpdf, only as thorough on what it accepts.
// To see exactly the objects qpdf sees, every object the cross-reference names must be one this
// reader parsed, and no stream it skipped may hide an object header.
import { inflateSync } from 'node:zlib';
import { entryFinding, scannedKey, stringTexts, type PdfValue } from './pdfcheck.js';

/** Largest PDF parsed in-process (larger ones go to qpdf, off the event loop). */
export const READ_MAX_BYTES = 16 * 1024 * 1024;
const INFLATE_BUDGET = 64 * 1024 * 1024;
const MAX_OBJECTS = 200_000;
const MAX_DEPTH = 64;
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

class Unreadable extends Error {}

class Name {
  constructor(readonly name: string) {}
}
class Ref {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
}
class Keyword {
  constructor(readonly word: string) {}
}
type Obj = null | boolean | number | Name | Ref | Buffer | Obj[] | Map<string, Obj> | Keyword;

const WHITE = new Set([0, 9, 10, 12, 13, 32]);
const DELIM = new Set([...'()<>[]{}/%'].map((c) => c.charCodeAt(0)));
const regular = (b: number | undefined) => b !== undefined && !WHITE.has(b) && !DELIM.has(b);
const fail = (why: string): never => {
  throw new Unreadable(why);
};

/** A PDF object parser over one buffer (the file, or an inflated object stream). */
class Lexer {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    private readonly onEntry: (key: string, value: Obj) => void,
  ) {}

  skipSpace(): void {
    const { buf } = this;
    while (this.pos < buf.length) {
      const b = buf[this.pos]!;
      if (WHITE.has(b)) this.pos++;
      else if (b === 0x25) while (this.pos < buf.length && buf[this.pos] !== 10 && buf[this.pos] !== 13) this.pos++;
      else break;
    }
  }

  private word(): string {
    const start = this.pos;
    while (regular(this.buf[this.pos])) this.pos++;
    return this.buf.toString('latin1', start, this.pos);
  }

  object(depth = 0): Obj {
    if (depth > MAX_DEPTH) fail('nesting too deep');
    this.skipSpace();
    const { buf } = this;
    const b = buf[this.pos];
    if (b === undefined) return fail('unexpected end');
    if (b === 0x3c && buf[this.pos + 1] === 0x3c) return this.dict(depth);
    if (b === 0x3c) return this.hexString();
    if (b === 0x28) return this.literalString();
    if (b === 0x2f) return this.name();
    if (b === 0x5b) {
      this.pos++;
      const items: Obj[] = [];
      for (;;) {
        this.skipSpace();
        if (buf[this.pos] === 0x5d) {
          this.pos++;
          return items;
        }
        const item = this.object(depth + 1);
        if (item instanceof Keyword) fail(`keyword ${item.word} in an array`);
        items.push(item);
      }
    }
    if (!regular(b)) return fail(`unexpected byte ${b}`);
    const word = this.word();
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word)) {
      // `num gen R` is a reference.
      if (/^\d+$/.test(word)) {
        const save = this.pos;
        this.skipSpace();
        const gen = this.word();
        this.skipSpace();
        if (/^\d+$/.test(gen) && buf[this.pos] === 0x52 && !regular(buf[this.pos + 1])) {
          this.pos++;
          return new Ref(Number(word), Number(gen));
        }
        this.pos = save;
      }
      return Number(word);
    }
    if (word === 'true' || word === 'false') return word === 'true';
    if (word === 'null') return null;
    return new Keyword(word);
  }

  private dict(depth: number): Map<string, Obj> {
    this.pos += 2;
    const dict = new Map<string, Obj>();
    for (;;) {
      this.skipSpace();
      if (this.buf[this.pos] === 0x3e && this.buf[this.pos + 1] === 0x3e) {
        this.pos += 2;
        return dict;
      }
      const key = this.object(depth + 1);
      if (!(key instanceof Name)) return fail('dictionary key is not a name');
      const value = this.object(depth + 1);
      if (value instanceof Keyword) fail(`keyword ${value.word} as a value`);
      this.onEntry(key.name, value);
      dict.set(key.name, value);
    }
  }

  private name(): Name {
    this.pos++;
    const raw = this.word();
    // #xx escapes: /Java#53cript is /JavaScript.
    const bytes = Buffer.from(raw.replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
    return new Name(bytes.toString('latin1'));
  }

  private hexString(): Buffer {
    const end = this.buf.indexOf(0x3e, this.pos);
    if (end < 0) fail('unterminated hex string');
    const digits = this.buf.toString('latin1', this.pos + 1, end).replace(/[\0\t\n\f\r ]/g, '');
    if (!/^[0-9a-fA-F]*$/.test(digits)) fail('bad hex string');
    this.pos = end + 1;
    return Buffer.from(digits.length % 2 ? `${digits}0` : digits, 'hex');
  }

  private literalString(): Buffer {
    const { buf } = this;
    const out: number[] = [];
    let depth = 1;
    this.pos++;
    for (;;) {
      const b = buf[this.pos++];
      if (b === undefined) return fail('unterminated string');
      if (b === 0x28) depth++;
      else if (b === 0x29 && --depth === 0) return Buffer.from(out);
      if (b !== 0x5c) {
        // An end of line in a string is a line feed, whatever its bytes.
        if (b === 13) {
          if (buf[this.pos] === 10) this.pos++;
          out.push(10);
        } else out.push(b);
        continue;
      }
      const e = buf[this.pos++];
      if (e === undefined) return fail('unterminated string');
      const simple: Record<number, number> = { 0x6e: 10, 0x72: 13, 0x74: 9, 0x62: 8, 0x66: 12, 0x28: 0x28, 0x29: 0x29, 0x5c: 0x5c };
      if (simple[e] !== undefined) out.push(simple[e]);
      else if (e >= 0x30 && e <= 0x37) {
        let code = e - 0x30;
        for (let i = 0; i < 2 && buf[this.pos]! >= 0x30 && buf[this.pos]! <= 0x37; i++) code = code * 8 + (buf[this.pos++]! - 0x30);
        out.push(code & 0xff);
      } else if (e === 13) {
        if (buf[this.pos] === 10) this.pos++;
      } else if (e !== 10) out.push(e);
    }
  }
}

const OBJ_HEADER = /^(\d+)[\0\t\n\f\r ]+(\d+)[\0\t\n\f\r ]+obj(?![^\0\t\n\f\r ()<>[\]{}/%])/;
/** Anything that looks like an object header inside data this reader skipped. */
const HIDDEN_HEADER = /\d[\0\t\n\f\r ]+\d+[\0\t\n\f\r ]+obj/;

function isName(value: Obj | undefined, name: string): boolean {
  return value instanceof Name && value.name === name;
}

/** A Flate stream's data, inflated within what is left of the budget. */
function inflate(dict: Map<string, Obj>, data: Buffer, budget: { left: number }): Buffer {
  const filter = dict.get('Filter');
  const flate = isName(filter, 'FlateDecode') || (Array.isArray(filter) && filter.length === 1 && isName(filter[0], 'FlateDecode'));
  if (!flate) fail('not a Flate stream');
  let out: Buffer;
  try {
    out = inflateSync(data, { maxOutputLength: Math.max(1, budget.left) });
  } catch {
    return fail('inflate failed or passed the budget');
  }
  budget.left -= out.length;
  const parms = dict.get('DecodeParms');
  if (parms === undefined || parms === null) return out;
  const predictor = parms instanceof Map ? parms.get('Predictor') : undefined;
  if (!(parms instanceof Map) || predictor === undefined || predictor === 1) return parms instanceof Map ? out : fail('decode parameters');
  // PNG predictors (xref streams): one filter byte per row; only None and Up are written by TeX.
  const columns = parms.get('Columns');
  if (typeof predictor !== 'number' || predictor < 10 || typeof columns !== 'number' || columns < 1) return fail('predictor');
  const rows = out.length / (columns + 1);
  if (!Number.isInteger(rows)) fail('predictor rows');
  const decoded = Buffer.alloc(rows * columns);
  for (let r = 0; r < rows; r++) {
    const type = out[r * (columns + 1)]!;
    if (type !== 0 && type !== 2) fail('predictor type');
    for (let c = 0; c < columns; c++) {
      const raw = out[r * (columns + 1) + 1 + c]!;
      const up = r > 0 && type === 2 ? decoded[(r - 1) * columns + c]! : 0;
      decoded[r * columns + c] = (raw + up) & 0xff;
    }
  }
  return decoded;
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

function readKeyword(lex: Lexer): string {
  const start = lex.pos;
  while (regular(lex.buf[lex.pos])) lex.pos++;
  return lex.buf.toString('latin1', start, lex.pos);
}

/** A stream's bytes: /Length when it is direct and lands on `endstream`, else fail. */
function streamData(lex: Lexer, dict: Map<string, Obj>): Buffer {
  const { buf } = lex;
  if (buf[lex.pos] === 13) lex.pos++;
  if (buf[lex.pos] === 10) lex.pos++;
  const length = dict.get('Length');
  if (typeof length !== 'number' || !Number.isInteger(length) || length < 0 || lex.pos + length > buf.length) return fail('stream length');
  const data = buf.subarray(lex.pos, lex.pos + length);
  lex.pos += length;
  lex.skipSpace();
  if (buf.toString('latin1', lex.pos, lex.pos + 9) !== 'endstream') fail('stream length does not reach endstream');
  lex.pos += 9;
  return data;
}

/** The objects of an object stream (its header is N pairs of number and offset from /First). */
function objectStream(dict: Map<string, Obj>, data: Buffer, onEntry: (key: string, value: Obj) => void): Array<[number, Obj]> {
  const n = dict.get('N');
  const first = dict.get('First');
  if (typeof n !== 'number' || typeof first !== 'number' || dict.has('Extends')) return fail('object stream header');
  const lex = new Lexer(data, 0, onEntry);
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < n; i++) {
    const num = lex.object();
    const offset = lex.object();
    if (typeof num !== 'number' || typeof offset !== 'number') fail('object stream pairs');
    pairs.push([num as number, offset as number]);
  }
  // Each object is parsed from its offset, and together they must cover the data after /First.
  const out: Array<[number, Obj]> = [];
  let end = first;
  for (const [num, offset] of pairs) {
    const sub = new Lexer(data, first + offset, onEntry);
    sub.skipSpace();
    if (sub.pos !== end && data.subarray(end, sub.pos).some((b) => !WHITE.has(b))) fail('object stream gap');
    const value = sub.object();
    if (value instanceof Keyword) fail('keyword in an object stream');
    out.push([num, value]);
    end = sub.pos;
  }
  const rest = new Lexer(data, end, onEntry);
  rest.skipSpace();
  if (rest.pos < data.length) fail('object stream trailing data');
  return out;
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
