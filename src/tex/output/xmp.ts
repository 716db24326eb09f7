// The document metadata a post-pass writes when no PDF/A was asked for (pdfx writes its own):
// the Info dictionary's entries as qpdf JSON strings and an XMP packet with the same values,
// every value escaped for XML.
import type { OutputMetadata } from './spec.js';

const xml = (text: string) => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Info dictionary entries (qpdf JSON: "u:" marks a Unicode text string). */
export function infoEntries(metadata: OutputMetadata): Record<string, string> {
  const entries: Record<string, string> = {};
  if (metadata.title) entries['/Title'] = `u:${metadata.title}`;
  if (metadata.author) entries['/Author'] = `u:${metadata.author}`;
  if (metadata.subject) entries['/Subject'] = `u:${metadata.subject}`;
  if (metadata.keywords?.length) entries['/Keywords'] = `u:${metadata.keywords.join(', ')}`;
  if (metadata.creator) entries['/Creator'] = `u:${metadata.creator}`;
  return entries;
}

export function xmpPacket(metadata: OutputMetadata): string {
  const alt = (value: string) => `<rdf:Alt><rdf:li xml:lang="x-default">${xml(value)}</rdf:li></rdf:Alt>`;
  const fields = [
    metadata.title ? `<dc:title>${alt(metadata.title)}</dc:title>` : '',
    metadata.author ? `<dc:creator><rdf:Seq><rdf:li>${xml(metadata.author)}</rdf:li></rdf:Seq></dc:creator>` : '',
    metadata.subject ? `<dc:description>${alt(metadata.subject)}</dc:description>` : '',
    metadata.lang ? `<dc:language><rdf:Bag><rdf:li>${xml(metadata.lang)}</rdf:li></rdf:Bag></dc:language>` : '',
    metadata.keywords?.length ? `<pdf:Keywords>${xml(metadata.keywords.join(', '))}</pdf:Keywords>` : '',
    metadata.creator ? `<xmp:CreatorTool>${xml(metadata.creator)}</xmp:CreatorTool>` : '',
  ].join('');
  return (
    '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>' +
    '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
    '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:pdf="http://ns.adobe.com/pdf/1.3/" xmlns:xmp="http://ns.adobe.com/xap/1.0/">' +
    `${fields}</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`
  );
}
