// The conformance report (issue 40): the checks the service really runs on a PDF, each named
// for what it checks, read from qpdf's JSON of its objects (pdf-model.ts) and its XMP packet.
// These checks are necessary conditions of PDF/UA (ISO 14289) and tagged PDF, not a full
// validator: a report lists which checks ran and never calls a document compliant; only
// PDFBox Preflight (PDF/A-1b, pdfa-check.ts) is a validator, and the report names it when it ran.
import type { PdfaFacts } from '../pdf/pdfread.js';
import type { PdfStandard, UaStandard } from './spec.js';
import { PdfModel, text, type JsonValue, type PdfDict } from './pdf-model.js';

export interface ConformanceCheck {
  id: string;
  passed: boolean;
  detail: string;
}

export interface ConformanceReport {
  /** The standards claimed (asked for), e.g. ["a-2b", "ua-1"]; empty for tagged without a standard. */
  standards: string[];
  checks: ConformanceCheck[];
  /** One line per failed check: "<id>: <detail>". */
  violations: string[];
  /** Validators that ran besides the service's own checks (PDFBox Preflight for a-1b). */
  validators: string[];
}

export interface ConformanceWanted {
  pdfa?: PdfStandard | undefined;
  ua?: UaStandard | undefined;
  /** Tagging checks (structure tree, figures, headings, tables) even without a UA claim. */
  tagged: boolean;
}

/** Structure types PDF defines (1.7 and 2.0): a role-mapped type resolves to one of these. */
const STANDARD_TYPES = new Set(
  (
    'Document DocumentFragment Part Art Sect Div BlockQuote Caption TOC TOCI Index NonStruct Private Aside Title FENote Sub ' +
    'P H H1 H2 H3 H4 H5 H6 L LI Lbl LBody Table TR TH TD THead TBody TFoot Span Quote Note Reference BibEntry Code Link Annot ' +
    'Em Strong Ruby RB RT RP Warichu WT WP Figure Formula Form Artifact'
  ).split(' '),
);
const MAX_ELEMENTS = 200_000;
/** An /Alt that is a graphic's file name (the kernel's stand-in for a missing alt text). */
const FILE_NAME = /^[\w./-]+\.(?:pdf|png|jpe?g|eps|ps|svg|jbig2|jb2)$/i;
const MAX_LISTED = 5;

interface Element {
  type: string;
  dict: PdfDict;
  children: Element[];
}

/** Every check for `wanted` on the PDF `model` with its XMP packet (`xmp`, null when none). */
export function conformanceChecks(model: PdfModel, xmp: string | null, wanted: ConformanceWanted): ConformanceCheck[] {
  const catalog = model.catalog ?? {};
  const checks: ConformanceCheck[] = [];
  const check = (id: string, passed: boolean, pass: string, fail: string) => checks.push({ id, passed, detail: passed ? pass : fail });
  const tagged = wanted.tagged || wanted.ua !== undefined;
  if (tagged) {
    const root = model.dict(catalog['/StructTreeRoot']);
    check('structure_tree_root', root !== null, 'the catalog has a /StructTreeRoot', 'the catalog has no /StructTreeRoot: the PDF is not tagged');
    const marked = model.dict(catalog['/MarkInfo'])?.['/Marked'] === true;
    check('mark_info_marked', marked, '/MarkInfo /Marked is true', '/MarkInfo /Marked is not true');
    const elements = root ? structureElements(model, root) : [];
    const figures = elements.filter((e) => e.type === 'Figure');
    // Without alt={…} the kernel writes the graphic's file name as /Alt (and warns): that is no description.
    const described = (e: Element) => [e.dict['/Alt'], e.dict['/ActualText']].some((v) => {
      const alt = text(model.resolve(v))?.trim();
      return Boolean(alt) && !FILE_NAME.test(alt!);
    });
    const bare = figures.filter((e) => !described(e));
    check('figures_alt', bare.length === 0, `${figures.length} figure(s), each with /Alt or /ActualText`, `${bare.length} of ${figures.length} figure(s) have no /Alt, or only a file name as /Alt (give \\includegraphics an alt={…})`);
    const headings = elements.map((e) => /^H([1-6])$/.exec(e.type)).filter((m): m is RegExpExecArray => m !== null).map((m) => Number(m[1]));
    const skip = headings.findIndex((level, i) => level > (i === 0 ? 1 : headings[i - 1]! + 1));
    check(
      'heading_levels',
      skip < 0,
      `${headings.length} heading(s) (${summary(headings.map((h) => `H${h}`))}), no level skipped`,
      `heading H${headings[skip]} follows ${skip === 0 ? 'the start of the document' : `H${headings[skip - 1]}`}: a level is skipped`,
    );
    // A table marked as layout (ARIA role presentation: the kernel's table/tagging=presentation)
    // declares it holds no data, so it needs no header cells.
    const classMap = model.dict(root?.['/ClassMap']) ?? {};
    const allTables = elements.filter((e) => e.type === 'Table');
    const tables = allTables.filter((e) => !presentational(model, e.dict, classMap));
    const layout = allTables.length - tables.length;
    const layoutNote = layout > 0 ? ` (and ${layout} layout table(s) marked presentation)` : '';
    const headless = tables.filter((table) => !descendants(table).some((e) => e.type === 'TH'));
    check(
      'tables_header_cells',
      headless.length === 0,
      `${tables.length} table(s), each with header cells (TH)${layoutNote}`,
      `${headless.length} of ${tables.length} table(s) have no header cell (TH)${layoutNote}: say which rows are headers, e.g. \\tagpdfsetup{table/header-rows={1}}, or mark a table that only lays out text \\tagpdfsetup{table/tagging=presentation}`,
    );
    const pages = model.pages();
    const untagged = pages.map((page, i) => (typeof model.resolve(page['/StructParents']) === 'number' ? 0 : i + 1)).filter((n) => n > 0);
    check('pages_struct_parents', untagged.length === 0, `all ${pages.length} page(s) have /StructParents`, `page(s) ${summary(untagged.map(String))} have no /StructParents: their content is not in the structure tree`);
    const annotated = pages.map((page, i) => (model.array(page['/Annots']).length > 0 && page['/Tabs'] !== '/S' ? i + 1 : 0)).filter((n) => n > 0);
    check('annotations_tab_order', annotated.length === 0, 'every page with annotations has /Tabs /S', `page(s) ${summary(annotated.map(String))} have annotations but no /Tabs /S`);
  }
  if (wanted.ua) {
    const lang = text(model.resolve(catalog['/Lang']));
    check('lang', Boolean(lang?.trim()), `/Lang is ${lang}`, 'the catalog has no /Lang (the document language)');
    const shown = model.dict(catalog['/ViewerPreferences'])?.['/DisplayDocTitle'] === true;
    check('display_doc_title', shown, '/ViewerPreferences /DisplayDocTitle is true', 'viewers show the file name, not the title: /ViewerPreferences /DisplayDocTitle is not true');
    const title = /<dc:title>[\s\S]*?<rdf:li[^>]*>\s*([^<\s][^<]*)<\/rdf:li>/.exec(xmp ?? '')?.[1];
    check('xmp_dc_title', title !== undefined, `XMP dc:title is "${title?.slice(0, 80)}"`, 'the XMP has no dc:title (give metadata.title)');
    const part = /pdfuaid:part(?:>|=")\s*(\d)/.exec(xmp ?? '')?.[1];
    const want = wanted.ua.slice(3);
    check('xmp_pdfuaid', part === want, `XMP pdfuaid:part is ${part}`, part ? `XMP pdfuaid:part is ${part}, not ${want}` : 'the XMP has no pdfuaid:part');
  }
  if (tagged || wanted.ua) {
    const fonts = model.fonts();
    const programs = fonts.filter((f) => f['/Subtype'] !== '/Type0' && f['/Subtype'] !== '/Type3');
    const unembedded = programs.filter((f) => !embedded(model, f)).map(fontName);
    check('fonts_embedded', unembedded.length === 0, `${programs.length} font program(s), all embedded`, `font(s) not embedded: ${summary(unembedded)}`);
    const unmapped = fonts.filter((f) => f['/Subtype'] !== '/CIDFontType0' && f['/Subtype'] !== '/CIDFontType2' && !unicodeMapped(model, f)).map(fontName);
    check('fonts_unicode', unmapped.length === 0, `${fonts.length - unmapped.length} font(s) map their glyphs to Unicode`, `font(s) without /ToUnicode, a standard encoding or named glyphs: ${summary(unmapped)}`);
  }
  return checks;
}

/**
 * The PDF/A checks of the structural check (pdfa-check.ts), one per property, from either
 * reader's facts; `preflight`: PDFBox Preflight's findings when it ran (a-1b), else undefined.
 */
export function pdfaChecks(standard: PdfStandard, facts: PdfaFacts & { encrypted?: boolean }, preflight?: string[]): ConformanceCheck[] {
  const part = standard.charAt(2);
  const conformance = standard.charAt(3).toUpperCase();
  const xmp = facts.xmp ?? '';
  const partFound = /pdfaid:part(?:>|=")\s*(\d)/.exec(xmp)?.[1];
  const confFound = /pdfaid:conformance(?:>|=")\s*([ABUFE])/i.exec(xmp)?.[1]?.toUpperCase() ?? '';
  const found = partFound ? `PDF/A-${partFound}${confFound.toLowerCase()}` : 'no PDF/A level';
  const checks: ConformanceCheck[] = [
    { id: 'xmp_pdfaid', passed: partFound === part && confFound === conformance, detail: `XMP pdfaid identifies ${found}${partFound === part && confFound === conformance ? '' : `, not ${standard.toUpperCase()}`}` },
    { id: 'output_intent', passed: facts.outputIntents > 0, detail: `the catalog has ${facts.outputIntents} /OutputIntents entr${facts.outputIntents === 1 ? 'y' : 'ies'}` },
    { id: 'not_encrypted', passed: !facts.encrypted, detail: facts.encrypted ? 'the PDF is encrypted' : 'the PDF is not encrypted' },
    {
      id: 'pdfa_fonts_embedded',
      passed: facts.unembeddedFonts.length === 0,
      detail: facts.unembeddedFonts.length === 0 ? 'every font is embedded' : `font(s) not embedded: ${summary(facts.unembeddedFonts)}`,
    },
  ];
  if (preflight) {
    checks.push({ id: 'pdfbox_preflight', passed: preflight.length === 0, detail: preflight.length === 0 ? 'Apache PDFBox Preflight found no PDF/A-1b error' : summary(preflight) });
  }
  return checks;
}

/** The PDF/A facts from the object model (for a PDF checked on its own, /api/v1/pdf/check). */
export function modelFacts(model: PdfModel, xmp: string | null): PdfaFacts & { encrypted: boolean } {
  const catalog = model.catalog ?? {};
  const unembeddedFonts = model
    .fonts()
    .filter((f) => f['/Subtype'] !== '/Type0' && f['/Subtype'] !== '/Type3' && !embedded(model, f))
    .map(fontName);
  return { xmp, outputIntents: model.array(catalog['/OutputIntents']).length, unembeddedFonts, encrypted: model.trailer['/Encrypt'] !== undefined };
}

/** The standards a PDF's XMP claims (pdfaid, pdfuaid), in the API's spelling. */
export function claimedStandards(xmp: string | null): { pdfa?: PdfStandard; ua?: UaStandard } {
  const part = /pdfaid:part(?:>|=")\s*(\d)/.exec(xmp ?? '')?.[1];
  const conformance = /pdfaid:conformance(?:>|=")\s*([ABUFE])/i.exec(xmp ?? '')?.[1]?.toLowerCase() ?? '';
  const pdfa = part ? `a-${part}${conformance}` : undefined;
  const ua = /pdfuaid:part(?:>|=")\s*([12])/.exec(xmp ?? '')?.[1];
  const known = ['a-1b', 'a-2b', 'a-3b', 'a-2u', 'a-3u', 'a-4', 'a-4f'];
  return { ...(pdfa && known.includes(pdfa) ? { pdfa: pdfa as PdfStandard } : {}), ...(ua ? { ua: `ua-${ua}` as UaStandard } : {}) };
}

/** The report of `checks` for the standards claimed; `validators` names validators that also ran. */
export function conformanceReport(standards: string[], checks: ConformanceCheck[], validators: string[] = []): ConformanceReport {
  return { standards, checks, violations: checks.filter((c) => !c.passed).map((c) => `${c.id}: ${c.detail}`), validators };
}

/** The structure elements under `root` in document order, each type role-mapped to a standard one (bounded). */
function structureElements(model: PdfModel, root: PdfDict): Element[] {
  const all: Element[] = [];
  const seen = new Set<PdfDict>();
  const roleMap = model.dict(root['/RoleMap']) ?? {};
  const walk = (kids: JsonValue | undefined, into: Element[], depth: number) => {
    for (const kid of model.array(kids)) {
      if (all.length >= MAX_ELEMENTS || depth > 200) return;
      const dict = model.dict(kid);
      // Marked-content ids (numbers), /MCR and /OBJR references are content, not elements.
      if (!dict || seen.has(dict) || typeof dict['/S'] !== 'string') continue;
      seen.add(dict);
      const element: Element = { type: standardType(model, dict, roleMap), dict, children: [] };
      all.push(element);
      into.push(element);
      walk(dict['/K'], element.children, depth + 1);
    }
  };
  walk(root['/K'], [], 0);
  return all;
}

/** An element's type through its namespace's /RoleMapNS (PDF 2.0) or the tree's /RoleMap, to a standard type. */
function standardType(model: PdfModel, dict: PdfDict, roleMap: PdfDict): string {
  let type = String(dict['/S']).slice(1);
  let ns = model.dict(dict['/NS']);
  for (let step = 0; step < 16; step++) {
    const nsMap = ns ? model.dict(ns['/RoleMapNS']) : null;
    const mapped = nsMap ? model.resolve(nsMap[`/${type}`]) : model.resolve(roleMap[`/${type}`]);
    // In the PDF 2.0 namespace (or none), a standard type is final.
    const inStandardNs = !ns || /pdf\/ssn/.test(text(model.resolve(ns['/NS'])) ?? '');
    if (STANDARD_TYPES.has(type) && (inStandardNs || mapped === null)) return type;
    if (typeof mapped === 'string' && mapped.startsWith('/')) {
      type = mapped.slice(1);
      ns = null;
    } else if (Array.isArray(mapped) && typeof mapped[0] === 'string') {
      type = mapped[0].slice(1);
      ns = model.dict(mapped[1]);
    } else {
      return type;
    }
  }
  return type;
}

/**
 * True when an element's attributes (its own /A, or its classes /C through the tree's
 * /ClassMap) give it the ARIA role `presentation` or `none`: content laid out, not structure.
 */
function presentational(model: PdfModel, dict: PdfDict, classMap: PdfDict): boolean {
  const listed = (value: JsonValue | undefined): JsonValue[] => {
    const resolved = model.resolve(value);
    return Array.isArray(resolved) ? resolved : resolved === null || resolved === undefined ? [] : [resolved];
  };
  const classes = listed(dict['/C']).flatMap((name) => (typeof name === 'string' ? listed(classMap[name]) : []));
  // /A and a class's entries may interleave revision numbers with the attribute dictionaries.
  return [...listed(dict['/A']), ...classes].some((entry) => {
    const attributes = model.dict(entry);
    if (!attributes || !/^\/ARIA/.test(String(attributes['/O']))) return false;
    const role = text(model.resolve(attributes['/role']))?.trim().toLowerCase();
    return role === 'presentation' || role === 'none';
  });
}

function descendants(element: Element): Element[] {
  const out: Element[] = [];
  const stack = [...element.children];
  while (stack.length > 0 && out.length < MAX_ELEMENTS) {
    const next = stack.pop()!;
    out.push(next);
    stack.push(...next.children);
  }
  return out;
}

function embedded(model: PdfModel, font: PdfDict): boolean {
  const descriptor = model.dict(font['/FontDescriptor']);
  return descriptor !== null && ['/FontFile', '/FontFile2', '/FontFile3'].some((key) => descriptor[key] !== undefined);
}

/** A /ToUnicode map, or a simple font with a standard encoding (its glyph names map to Unicode). */
function unicodeMapped(model: PdfModel, font: PdfDict): boolean {
  if (font['/ToUnicode'] !== undefined) return true;
  if (font['/Subtype'] === '/Type0') return false;
  const encoding = model.resolve(font['/Encoding']);
  if (encoding === '/WinAnsiEncoding' || encoding === '/MacRomanEncoding' || encoding === '/StandardEncoding') return true;
  // An encoding dictionary whose glyph names are real names (A, quoteright, uni20AC), not generic ones (g12, cid34, index7).
  const differences = model.dict(encoding) ? model.array(model.dict(encoding)!['/Differences']) : [];
  const names = differences.filter((d): d is string => typeof d === 'string');
  return names.length > 0 && names.every((name) => !/^\/(?:g|glyph|cid|index|c)\d+$/i.test(name));
}

function fontName(font: PdfDict): string {
  const name = font['/BaseFont'];
  return typeof name === 'string' ? name.slice(1) : `(${String(font['/Subtype'] ?? 'font').slice(1)} without a name)`;
}

function summary(items: string[]): string {
  if (items.length === 0) return 'none';
  return items.length > MAX_LISTED ? `${items.slice(0, MAX_LISTED).join(', ')} and ${items.length - MAX_LISTED} more` : items.join(', ');
}

/**
 * The tagged structure of `model` as one canonical text, without object numbers: the catalog's
 * /Lang, /MarkInfo and /ViewerPreferences, every structure element in tree order (its type,
 * title, language, alternate and actual text, attributes, and its kids: marked-content ids
 * with their page, object references, elements), each page's /StructParents and /Tabs, and the
 * parent tree (which element each page's marked content and each annotation belongs to). Two
 * PDFs of one document with the same text have the same signature when their structure trees
 * agree: what a cache's run is compared on against a cold one (caches/paused-cache.ts).
 */
export function structureSignature(model: PdfModel): string {
  const catalog = model.catalog ?? {};
  const pages = model.pages();
  const pageIndex = new Map(pages.map((page, i) => [page, i + 1]));
  const page = (value: JsonValue | undefined) => {
    const dict = model.dict(value);
    return dict ? (pageIndex.get(dict) ?? '?') : null;
  };
  const ids = new Map<PdfDict, number>();
  const plain = (value: JsonValue | undefined, depth = 0): JsonValue => {
    const resolved = model.resolve(value);
    if (depth > 8) return '…';
    if (Array.isArray(resolved)) return resolved.map((v) => plain(v, depth + 1));
    if (resolved && typeof resolved === 'object') return Object.fromEntries(Object.keys(resolved).sort().map((k) => [k, plain(resolved[k], depth + 1)]));
    return resolved;
  };
  const element = (dict: PdfDict, depth: number, inherited: number | string | null): JsonValue => {
    if (ids.has(dict) || ids.size >= MAX_ELEMENTS || depth > 200) return { again: ids.get(dict) ?? -1 };
    ids.set(dict, ids.size);
    const pg = dict['/Pg'] !== undefined ? page(dict['/Pg']) : inherited;
    const kids = model.array(dict['/K']).map((kid): JsonValue => {
      if (typeof kid === 'number') return { mcid: kid, page: pg };
      const k = model.dict(kid);
      if (!k) return null;
      if (k['/Type'] === '/MCR') return { mcid: plain(k['/MCID']), page: k['/Pg'] !== undefined ? page(k['/Pg']) : pg };
      if (k['/Type'] === '/OBJR') return { objr: page(k['/Pg']) ?? pg, subtype: plain(model.dict(k['/Obj'])?.['/Subtype']) };
      return element(k, depth + 1, pg);
    });
    const keys = ['/S', '/NS', '/T', '/Lang', '/Alt', '/ActualText', '/E', '/A', '/C', '/ID'];
    return { id: ids.get(dict)!, ...Object.fromEntries(keys.filter((k) => dict[k] !== undefined).map((k) => [k, plain(dict[k])])), kids };
  };
  const root = model.dict(catalog['/StructTreeRoot']);
  const tree = root ? model.array(root['/K']).map((kid) => (model.dict(kid) ? element(model.dict(kid)!, 0, null) : null)) : null;
  // The parent tree's number tree, flattened (bounded like the walk above).
  const parents: JsonValue[] = [];
  const nums = (node: PdfDict | null, depth: number) => {
    if (!node || depth > 32 || parents.length > MAX_ELEMENTS) return;
    const flat = model.array(node['/Nums']);
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const target = model.resolve(flat[i + 1]);
      const id = (v: JsonValue) => (model.dict(v) ? (ids.get(model.dict(v)!) ?? 'outside the tree') : null);
      parents.push([flat[i]!, Array.isArray(target) ? target.map(id) : id(flat[i + 1]!)]);
    }
    for (const kid of model.array(node['/Kids'])) nums(model.dict(kid), depth + 1);
  };
  nums(root ? model.dict(root['/ParentTree']) : null, 0);
  return JSON.stringify({
    lang: plain(catalog['/Lang']),
    markInfo: plain(catalog['/MarkInfo']),
    viewer: plain(catalog['/ViewerPreferences']),
    roleMap: root ? plain(root['/RoleMap']) : null,
    tree,
    pages: pages.map((p) => [plain(p['/StructParents']), plain(p['/Tabs']), model.array(p['/Annots']).map((a) => plain(model.dict(a)?.['/StructParent']))]),
    parents,
  });
}
