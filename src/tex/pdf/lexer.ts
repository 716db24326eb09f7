// The PDF object syntax as the in-process reader (pdfread.ts) parses it: names, references,
// strings, arrays, dictionaries, streams and object streams over one buffer, bounded in
// nesting depth and inflated bytes. Anything it does not understand fails as Unreadable, and
// the reader gives the PDF to qpdf.
import { inflateSync } from 'node:zlib';

/** Deepest nesting of arrays and dictionaries (and of the page tree) the reader follows. */
export const MAX_DEPTH = 64;

export class Unreadable extends Error {}

export class Name {
  constructor(readonly name: string) {}
}
export class Ref {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
}
export class Keyword {
  constructor(readonly word: string) {}
}
export type Obj = null | boolean | number | Name | Ref | Buffer | Obj[] | Map<string, Obj> | Keyword;

const WHITE = new Set([0, 9, 10, 12, 13, 32]);
const DELIM = new Set([...'()<>[]{}/%'].map((c) => c.charCodeAt(0)));
const regular = (b: number | undefined) => b !== undefined && !WHITE.has(b) && !DELIM.has(b);
export const fail = (why: string): never => {
  throw new Unreadable(why);
};

/** A PDF object parser over one buffer (the file, or an inflated object stream). */
export class Lexer {
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

export const OBJ_HEADER = /^(\d+)[\0\t\n\f\r ]+(\d+)[\0\t\n\f\r ]+obj(?![^\0\t\n\f\r ()<>[\]{}/%])/;
/** Anything that looks like an object header inside data this reader skipped. */
export const HIDDEN_HEADER = /\d[\0\t\n\f\r ]+\d+[\0\t\n\f\r ]+obj/;

export function isName(value: Obj | undefined, name: string): boolean {
  return value instanceof Name && value.name === name;
}

/** A Flate stream's data, inflated within what is left of the budget. */
export function inflate(dict: Map<string, Obj>, data: Buffer, budget: { left: number }): Buffer {
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

export function readKeyword(lex: Lexer): string {
  const start = lex.pos;
  while (regular(lex.buf[lex.pos])) lex.pos++;
  return lex.buf.toString('latin1', start, lex.pos);
}

/** A stream's bytes: /Length when it is direct and lands on `endstream`, else fail. */
export function streamData(lex: Lexer, dict: Map<string, Obj>): Buffer {
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
export function objectStream(dict: Map<string, Obj>, data: Buffer, onEntry: (key: string, value: Obj) => void): Array<[number, Obj]> {
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
