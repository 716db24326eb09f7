// The Factur-X (ZUGFeRD 2.1+) metadata of a PDF/A-3 invoice: besides the embedded
// factur-x.xml, readers and validators look for the fx: properties in the XMP (document type,
// file name, version, conformance level) and, since PDF/A allows only declared schemas, for
// the fx extension schema in pdfaExtension:schemas. pdfx builds its XMP from the template
// pdfa.xmp, found through kpathsea, so the job's folder gets a copy of TeX Live's with both
// added, which pdfx reads instead (a job that brings its own pdfa.xmp keeps it).
import { readFileSync } from 'node:fs';
import { hostPath, imageToolSync } from '../image/tools.js';
import type { OutputSpec } from './spec.js';
import { defaultImageRoot } from '../image/default.js';

export const FACTURX_XML = 'factur-x.xml';
/** pdfx's template for every PDF/A level; a copy in the job's folder comes first in the search. */
export const PDFA_TEMPLATE = 'pdfa.xmp';
const NAMESPACE = 'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#';

/** Conformance levels by the XML's guideline ID (Factur-X 1.0.07, XRechnung through ZUGFeRD 2.1.1+). */
const LEVELS: Array<[RegExp, string]> = [
  [/^urn:factur-x\.eu:1p0:minimum$/, 'MINIMUM'],
  [/^urn:factur-x\.eu:1p0:basicwl$/, 'BASIC WL'],
  [/^urn:cen\.eu:en16931:2017#compliant#urn:factur-x\.eu:1p0:basic$/, 'BASIC'],
  [/^urn:cen\.eu:en16931:2017$/, 'EN 16931'],
  [/^urn:cen\.eu:en16931:2017#conformant#urn:factur-x\.eu:1p0:extended$/, 'EXTENDED'],
  [/^urn:cen\.eu:en16931:2017#compliant#urn:xeinkauf\.de:kosit:xrechnung_\d/, 'XRECHNUNG'],
];

/** The conformance level the invoice XML declares, or null for none this service knows. */
export function facturxLevel(xml: Buffer): string | null {
  const id = /<(?:[\w-]+:)?GuidelineSpecifiedDocumentContextParameter>\s*<(?:[\w-]+:)?ID>\s*([^<\s]+)\s*<\//.exec(xml.toString('utf8'))?.[1];
  return id ? (LEVELS.find(([pattern]) => pattern.test(id))?.[1] ?? null) : null;
}

const PROPERTIES: Array<[string, string]> = [
  ['DocumentFileName', 'The name of the embedded XML document'],
  ['DocumentType', 'The type of the hybrid document in capital letters, e.g. INVOICE or ORDER'],
  ['Version', 'The actual version of the standard applying to the embedded XML document'],
  ['ConformanceLevel', 'The conformance level of the embedded XML document'],
];

const schema = () =>
  [
    '     <rdf:li rdf:parseType="Resource">',
    '       <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>',
    `       <pdfaSchema:namespaceURI>${NAMESPACE}</pdfaSchema:namespaceURI>`,
    '       <pdfaSchema:prefix>fx</pdfaSchema:prefix>',
    '       <pdfaSchema:property><rdf:Seq>',
    ...PROPERTIES.flatMap(([name, description]) => [
      '          <rdf:li rdf:parseType="Resource">',
      `            <pdfaProperty:name>${name}</pdfaProperty:name>`,
      '            <pdfaProperty:valueType>Text</pdfaProperty:valueType>',
      '            <pdfaProperty:category>external</pdfaProperty:category>',
      `            <pdfaProperty:description>${description}</pdfaProperty:description>`,
      '          </rdf:li>',
    ]),
    '       </rdf:Seq></pdfaSchema:property>',
    '     </rdf:li>',
    '',
  ].join('\n');

const description = (level: string) =>
  [
    `  <rdf:Description rdf:about="" xmlns:fx="${NAMESPACE}">`,
    '   <fx:DocumentType>INVOICE</fx:DocumentType>',
    `   <fx:DocumentFileName>${FACTURX_XML}</fx:DocumentFileName>`,
    '   <fx:Version>1.0</fx:Version>',
    `   <fx:ConformanceLevel>${level}</fx:ConformanceLevel>`,
    '  </rdf:Description>',
    '',
  ].join('\n');

const SCHEMAS_END = '   </rdf:Bag>\n   </pdfaExtension:schemas>';
const RDF_END = ' </rdf:RDF>';

/** pdfx's template with the fx schema and properties added, or null when it is not the shape expected. */
export function facturxTemplate(template: string, level: string): string | null {
  const schemas = template.indexOf(SCHEMAS_END);
  const rdf = template.lastIndexOf(RDF_END);
  if (schemas < 0 || rdf < schemas) return null;
  return template.slice(0, schemas) + schema() + template.slice(schemas, rdf) + description(level) + template.slice(rdf);
}

let installed: string | null | undefined;

/** TeX Live's pdfa.xmp, read once (null without pdfx). */
function installedTemplate(): string | null {
  if (installed === undefined) {
    try {
      const image = defaultImageRoot();
      installed = readFileSync(hostPath(imageToolSync(['kpsewhich', PDFA_TEMPLATE], image).trim(), image), 'utf8');
    } catch {
      installed = null;
    }
  }
  return installed;
}

/** The template file a PDF/A-3 job with a Factur-X XML of a known level gets, or null. */
export function facturxFile(output: OutputSpec): { name: string; data: Buffer } | null {
  if (!output.pdfStandard?.startsWith('a-3')) return null;
  const xml = output.attachments?.find((a) => a.name === FACTURX_XML);
  const level = xml ? facturxLevel(xml.data) : null;
  const template = level ? installedTemplate() : null;
  const text = template && level ? facturxTemplate(template, level) : null;
  return text ? { name: PDFA_TEMPLATE, data: Buffer.from(text) } : null;
}
