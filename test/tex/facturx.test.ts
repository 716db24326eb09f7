// The Factur-X XMP (src/tex/output/facturx.ts): the conformance level read from the invoice
// XML's guideline, the template made from TeX Live's pdfa.xmp, and when a job gets it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { hostPath, imageToolSync } from '../../src/tex/image/tools.js';
import { facturxFile, facturxLevel, facturxTemplate } from '../../src/tex/output/facturx.js';
import { outputFiles } from '../../src/tex/output/source.js';
import type { OutputSpec } from '../../src/tex/output/spec.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

const xml = (id: string) =>
  Buffer.from(`<?xml version="1.0"?><rsm:CrossIndustryInvoice xmlns:rsm="x" xmlns:ram="y"><rsm:ExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter>\n  <ram:ID>${id}</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext></rsm:CrossIndustryInvoice>`);
const invoice = (id: string, standard: OutputSpec['pdfStandard'] = 'a-3b'): OutputSpec => ({
  pdfStandard: standard,
  attachments: [{ name: 'factur-x.xml', data: xml(id), relationship: 'Data', mimeType: 'text/xml' }],
});

describe('Factur-X XMP', () => {
  test('the conformance level comes from the guideline the XML declares', () => {
    assert.equal(facturxLevel(xml('urn:factur-x.eu:1p0:minimum')), 'MINIMUM');
    assert.equal(facturxLevel(xml('urn:factur-x.eu:1p0:basicwl')), 'BASIC WL');
    assert.equal(facturxLevel(xml('urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:basic')), 'BASIC');
    assert.equal(facturxLevel(xml('urn:cen.eu:en16931:2017')), 'EN 16931');
    assert.equal(facturxLevel(xml('urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended')), 'EXTENDED');
    assert.equal(facturxLevel(xml('urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0')), 'XRECHNUNG');
    assert.equal(facturxLevel(xml('urn:example:unknown')), null);
    assert.equal(facturxLevel(Buffer.from('<not-an-invoice/>')), null);
  });

  test('the template is TeX Live\'s pdfa.xmp with the fx schema declared and the fx properties set', () => {
    const installed = readFileSync(hostPath(imageToolSync(['kpsewhich', 'pdfa.xmp'], defaultImageRoot()).trim(), defaultImageRoot()), 'utf8');
    const made = facturxTemplate(installed, 'EN 16931');
    assert.ok(made);
    // Only additions: the original before the end of the schema list, and from </rdf:RDF> on.
    assert.ok(made.startsWith(installed.slice(0, installed.indexOf('   </rdf:Bag>'))));
    assert.ok(made.endsWith(installed.slice(installed.lastIndexOf(' </rdf:RDF>'))));
    const schemas = made.slice(made.indexOf('<pdfaExtension:schemas>'), made.indexOf('</pdfaExtension:schemas>'));
    assert.match(schemas, /<pdfaSchema:prefix>fx<\/pdfaSchema:prefix>/);
    for (const name of ['DocumentFileName', 'DocumentType', 'Version', 'ConformanceLevel']) assert.match(schemas, new RegExp(`<pdfaProperty:name>${name}</pdfaProperty:name>`));
    assert.match(made, /<fx:ConformanceLevel>EN 16931<\/fx:ConformanceLevel>\n {2}<\/rdf:Description>\n <\/rdf:RDF>/);
    assert.equal(facturxTemplate('no template here', 'BASIC'), null);
  });

  test('only a PDF/A-3 job with a factur-x.xml of a known level gets it, and never over the job\'s own', () => {
    assert.equal(facturxFile(invoice('urn:factur-x.eu:1p0:minimum'))?.name, 'pdfa.xmp');
    assert.equal(facturxFile(invoice('urn:factur-x.eu:1p0:minimum', 'a-2b')), null);
    assert.equal(facturxFile(invoice('urn:example:unknown')), null);
    assert.equal(facturxFile({ pdfStandard: 'a-3b' }), null);
    const names = (jobFiles: string[]) => outputFiles(invoice('urn:cen.eu:en16931:2017'), 'main', jobFiles).map((f) => f.name);
    assert.deepEqual(names([]), ['main.xmpdata', 'main.attachments/factur-x.xml', 'pdfa.xmp']);
    assert.deepEqual(names(['pdfa.xmp']), ['main.xmpdata', 'main.attachments/factur-x.xml']);
  });
});
