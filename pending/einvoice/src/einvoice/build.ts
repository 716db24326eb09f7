// Builds the CII XML of an e-invoice (issue 41 item 1): Quire's invoice shape (model.ts), mapped
// to @e-invoice-eu/core's model (mapping.ts), written by that library's CII writer with the
// profile's guideline ID and its element subset (MINIMUM and BASIC WL carry no lines). The
// library's Factur-X formats make a PDF of their own (pdf-lib); only its XML writer is used here,
// the PDF/A-3 is TeX's (pdfx + embedfile, tex/output/). The library (about 1 s to load: it
// bundles pdf-lib and a spreadsheet reader) is loaded on the first e-invoice, not at start.
import type { EinvoiceProfile } from './report.js';
import type { Invoice } from './model.js';
import { toLibraryModel } from './mapping.js';
import { decimal } from './totals.js';

export interface ProfileInfo {
  /** @e-invoice-eu/core's format whose guideline ID and element subset the XML gets. */
  format: string;
  /** The embedded file's name (Factur-X 1.07: xrechnung.xml for the XRECHNUNG profile). */
  fileName: 'factur-x.xml' | 'xrechnung.xml';
  /** /AFRelationship: Data for MINIMUM and BASIC WL (not full invoices), else Alternative (Factur-X 1.07 §6.2.2). */
  relationship: 'Data' | 'Alternative';
  /** fx:ConformanceLevel in the XMP. */
  level: string;
}

export const PROFILES: Record<EinvoiceProfile, ProfileInfo> = {
  minimum: { format: 'Factur-X-Minimum', fileName: 'factur-x.xml', relationship: 'Data', level: 'MINIMUM' },
  'basic-wl': { format: 'Factur-X-Basic WL', fileName: 'factur-x.xml', relationship: 'Data', level: 'BASIC WL' },
  basic: { format: 'Factur-X-Basic', fileName: 'factur-x.xml', relationship: 'Alternative', level: 'BASIC' },
  en16931: { format: 'Factur-X-EN16931', fileName: 'factur-x.xml', relationship: 'Alternative', level: 'EN 16931' },
  extended: { format: 'Factur-X-Extended', fileName: 'factur-x.xml', relationship: 'Alternative', level: 'EXTENDED' },
  // XRechnung as CII, with every CII element (the library's full mask) and KoSIT's guideline ID.
  xrechnung: { format: 'Factur-X-XRechnung', fileName: 'xrechnung.xml', relationship: 'Alternative', level: 'XRECHNUNG' },
};

interface Writer {
  customizationID: string;
  fillInvoiceDefaults(invoice: unknown): void;
}
type Generate = (this: Writer, invoice: unknown, options: unknown) => Promise<string | Uint8Array>;

let library: Promise<{ writer: (format: string) => Writer; generate: Generate }> | undefined;

const quiet = { log: () => {}, warn: () => {}, error: () => {} };

/**
 * The library's formats: a Factur-X one gives the profile (guideline ID, element mask); its
 * CII base class's generate writes the XML (the Factur-X subclass's own would also make a PDF).
 */
function load() {
  library ??= import('@e-invoice-eu/core').then((core) => {
    const factory = new core.FormatFactoryService();
    const cii = factory.createFormatService('CII', quiet) as unknown as object;
    const generate = (Object.getPrototypeOf(cii) as { generate: Generate }).generate;
    return { writer: (format: string) => factory.createFormatService(format, quiet) as unknown as Writer, generate };
  });
  return library;
}

/** The CII XML of `invoice` for `profile`. */
export async function buildCii(invoice: Invoice, profile: EinvoiceProfile): Promise<Buffer> {
  const { writer, generate } = await load();
  const format = writer(PROFILES[profile].format);
  const model = toLibraryModel(invoice);
  model['ubl:Invoice']['cbc:CustomizationID'] = format.customizationID;
  format.fillInvoiceDefaults(model);
  const xml = await generate.call(format, model, { format: PROFILES[profile].format, lang: 'en-us' });
  const text = typeof xml === 'string' ? xml : Buffer.from(xml).toString('utf8');
  const delivered = withDelivery(text);
  return Buffer.from(profile === 'basic' ? withNetPrices(delivered, invoice.lines.map((line) => decimal(line.unit_price))) : delivered);
}

/**
 * CII requires ApplicableHeaderTradeDelivery (empty is allowed); the library writes it only when
 * there is a delivery to describe, so an invoice without delivery_date would fail the schema.
 */
export function withDelivery(xml: string): string {
  if (xml.includes('<ram:ApplicableHeaderTradeDelivery')) return xml;
  return xml.replace('<ram:ApplicableHeaderTradeSettlement>', '<ram:ApplicableHeaderTradeDelivery/><ram:ApplicableHeaderTradeSettlement>');
}

const PRODUCT_END = '</ram:SpecifiedTradeProduct>';
const escapeXml = (text: string) => text.replace(/[<>&]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The item net price (BT-146) of each line, which BASIC requires (BR-26) and which
 * @e-invoice-eu/core 2.3.4 leaves out at BASIC (its price group is masked EN 16931 and up,
 * while the price inside it is masked BASIC): put back after each line's product, where the
 * CII schema has it. Each line has exactly one SpecifiedTradeProduct, the header none.
 */
export function withNetPrices(xml: string, prices: string[]): string {
  const parts = xml.split(PRODUCT_END);
  if (parts.length - 1 !== prices.length || xml.includes('<ram:SpecifiedLineTradeAgreement>')) return xml;
  return parts
    .map((part, i) =>
      i < prices.length
        ? `${part}${PRODUCT_END}<ram:SpecifiedLineTradeAgreement><ram:NetPriceProductTradePrice><ram:ChargeAmount>${escapeXml(prices[i]!)}</ram:ChargeAmount></ram:NetPriceProductTradePrice></ram:SpecifiedLineTradeAgreement>`
        : part,
    )
    .join('');
}
