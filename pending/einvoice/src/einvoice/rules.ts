// Runs the official schematron (EN 16931 for CII or UBL, KoSIT's XRechnung) with saxon-js on a
// parsed invoice and reads the SVRL it writes: each failed-assert or successful-report becomes a
// finding with its rule id, text and location; flag fatal or error is an error, warning or
// information a warning. The stylesheets are the vendored SEFs (vendor/einvoice/SOURCE.md),
// each loaded on first use and kept for the life of the thread. Runs in the rules worker
// (worker.ts), never on the server's event loop.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import SaxonJS from 'saxon-js';
import { projectRoot } from '../project-root.js';
import type { EinvoiceFinding } from './report.js';

/** The versions of the vendored rule sets, named in every report's `rules_version`. */
export const RULES_VERSION = {
  en16931: 'EN 16931 1.3.16',
  xrechnung: 'XRechnung schematron 2.5.0',
  xsd: 'CII D16B XSD',
} as const;

export type RuleSet = 'en16931-cii' | 'en16931-ubl' | 'xrechnung-cii' | 'xrechnung-ubl';

const SVRL = 'http://purl.oclc.org/dsdl/svrl';
const loaded = new Map<RuleSet, unknown>();

/** The compiled stylesheet of `set`, read and parsed once. */
function stylesheet(set: RuleSet): unknown {
  let sef = loaded.get(set);
  if (sef === undefined) {
    const file = join(projectRoot(), 'vendor', 'einvoice', 'sef', `${set}.sef.json.gz`);
    sef = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as unknown;
    loaded.set(set, sef);
  }
  return sef;
}

/** Loads every stylesheet now (a warm-up, so the first validation does not pay for it). */
export function loadAll(): void {
  for (const set of ['en16931-cii', 'en16931-ubl', 'xrechnung-cii', 'xrechnung-ubl'] as const) stylesheet(set);
}

/** Parses `text` with saxon-js's own parser (DOCTYPEs were refused before: scan.ts). */
export async function parseForRules(text: string): Promise<unknown> {
  return SaxonJS.getResource({ text, type: 'xml' });
}

interface SvrlNode {
  getAttribute(name: string): string | null;
  textContent: string | null;
  localName: string;
}

/** The findings of rule set `set` on the parsed document `doc`. */
export function runRules(set: RuleSet, doc: unknown): { errors: EinvoiceFinding[]; warnings: EinvoiceFinding[] } {
  const result = SaxonJS.transform({ stylesheetInternal: stylesheet(set), sourceNode: doc, destination: 'document' }, 'sync') as { principalResult: unknown };
  const nodes = SaxonJS.XPath.evaluate('//(svrl:failed-assert | svrl:successful-report)', result.principalResult, {
    namespaceContext: { svrl: SVRL },
    resultForm: 'array',
  }) as SvrlNode[];
  const errors: EinvoiceFinding[] = [];
  const warnings: EinvoiceFinding[] = [];
  for (const node of nodes) {
    const flag = (node.getAttribute('flag') ?? 'error').toLowerCase();
    const finding: EinvoiceFinding = {
      rule: node.getAttribute('id') ?? 'unnamed',
      message: (node.textContent ?? '').replace(/\s+/g, ' ').trim(),
      location: readableLocation(node.getAttribute('location') ?? ''),
    };
    (flag === 'warning' || flag === 'information' || flag === 'info' ? warnings : errors).push(finding);
  }
  return { errors, warnings };
}

const PREFIXES: Record<string, string> = {
  'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100': 'rsm',
  'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100': 'ram',
  'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100': 'udt',
  'urn:un:unece:uncefact:data:standard:QualifiedDataType:100': 'qdt',
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2': 'ubl',
  'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2': 'cn',
  'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2': 'cac',
  'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2': 'cbc',
  'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2': 'ext',
};

/**
 * The location as a short XPath with the usual prefixes: the ISO skeleton writes
 * `*:Name[namespace-uri()='…']`, SchXslt `Q{…}Name`; both become `rsm:Name`.
 */
export function readableLocation(location: string): string {
  return location
    .replace(/\*:([\w.-]+)\[namespace-uri\(\)='([^']*)'\]/g, (whole, local: string, ns: string) => (PREFIXES[ns] ? `${PREFIXES[ns]}:${local}` : whole))
    .replace(/Q\{([^}]*)\}([\w.-]+)/g, (whole, ns: string, local: string) => (PREFIXES[ns] ? `${PREFIXES[ns]}:${local}` : whole));
}
