// A PDF's objects as qpdf's JSON gives them (`qpdf --json=2 --json-key=qpdf`, run in the
// sandbox: qpdf has decoded object streams, name and string escapes), for the conformance
// checks (conformance.ts). qpdf's JSON v2 spells names "/Name", references "12 0 R", strings
// "u:text" (or "b:hex" for bytes), dictionaries as objects keyed by "/Key"; a stream is
// {stream: {dict}} (no data: stream data is left out). Every walk over it is bounded.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type PdfDict = Record<string, JsonValue>;

/** Largest qpdf JSON read back (its stream data left out, this is the PDF's object structure). */
export const MODEL_JSON_MAX = 48 * 1024 * 1024;

const REF = /^\d+ \d+ R$/;

export class PdfModel {
  private constructor(
    private readonly objects: Record<string, { value?: JsonValue; stream?: { dict?: PdfDict } }>,
    readonly trailer: PdfDict,
  ) {}

  /** The model of qpdf's JSON text, or null when it is not qpdf's JSON v2 of a PDF with a catalog. */
  static parse(json: string): PdfModel | null {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      return null;
    }
    const objects = (parsed as { qpdf?: [unknown, Record<string, { value?: JsonValue; stream?: { dict?: PdfDict } }>] })?.qpdf?.[1];
    const trailer = objects?.trailer?.value;
    if (!objects || !isDict(trailer)) return null;
    const model = new PdfModel(objects, trailer);
    return model.catalog ? model : null;
  }

  /** A value with references followed (a stream stands for its dictionary); null when it names nothing. */
  resolve(value: JsonValue | undefined, depth = 0): JsonValue {
    if (typeof value !== 'string' || !REF.test(value) || depth > 32) return value ?? null;
    const entry = this.objects[`obj:${value}`];
    if (!entry) return null;
    return this.resolve(entry.stream ? (entry.stream.dict ?? {}) : entry.value, depth + 1);
  }

  dict(value: JsonValue | undefined): PdfDict | null {
    const resolved = this.resolve(value);
    return isDict(resolved) ? resolved : null;
  }

  array(value: JsonValue | undefined): JsonValue[] {
    const resolved = this.resolve(value);
    return Array.isArray(resolved) ? resolved : resolved === null ? [] : [resolved];
  }

  get catalog(): PdfDict | null {
    return this.dict(this.trailer['/Root']);
  }

  /** The page dictionaries in order (the page tree walked, at most `max`). */
  pages(max = 100_000): PdfDict[] {
    const pages: PdfDict[] = [];
    const seen = new Set<PdfDict>();
    const walk = (node: PdfDict | null, depth: number) => {
      if (!node || seen.has(node) || depth > 64 || pages.length >= max) return;
      seen.add(node);
      if (node['/Type'] === '/Pages' || node['/Kids'] !== undefined) for (const kid of this.array(node['/Kids'])) walk(this.dict(kid), depth + 1);
      else pages.push(node);
    };
    walk(this.dict(this.catalog?.['/Pages']), 0);
    return pages;
  }

  /** Every font dictionary reachable from the pages' resources (and their forms'), each once, with descendant fonts. */
  fonts(max = 10_000): PdfDict[] {
    const fonts = new Set<PdfDict>();
    const seen = new Set<PdfDict>();
    const resources = (res: PdfDict | null, depth: number) => {
      if (!res || seen.has(res) || depth > 16 || fonts.size >= max) return;
      seen.add(res);
      for (const ref of Object.values(this.dict(res['/Font']) ?? {})) {
        const font = this.dict(ref);
        if (!font) continue;
        fonts.add(font);
        for (const descendant of this.array(font['/DescendantFonts'])) {
          const d = this.dict(descendant);
          if (d) fonts.add(d);
        }
        resources(this.dict(font['/Resources']), depth + 1);
      }
      for (const ref of Object.values(this.dict(res['/XObject']) ?? {})) {
        const xobject = this.dict(ref);
        if (xobject?.['/Subtype'] === '/Form') resources(this.dict(xobject['/Resources']), depth + 1);
      }
    };
    for (const page of this.pages()) resources(this.dict(page['/Resources']), 0);
    return [...fonts];
  }
}

export function isDict(value: unknown): value is PdfDict {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A PDF string's text as qpdf spells it ("u:…"), or null. */
export function text(value: JsonValue | undefined): string | null {
  if (typeof value !== 'string') return null;
  if (value.startsWith('u:')) return value.slice(2);
  if (value.startsWith('b:')) return Buffer.from(value.slice(2), 'hex').toString('latin1');
  return null;
}
