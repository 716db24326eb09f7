// The source side of a job's output step: what PDF/A and embedded files need from TeX itself.
// pdfx (loaded right after \documentclass) makes every engine write the XMP, the output
// intent and the PDF version a standard asks for, from an .xmpdata file we write beside the
// source; embedfile embeds attachments as associated files (/AF, /AFRelationship).
import type { Compiler } from '../compilers.js';
// Reserved for the job with the other names the service writes (project/paths.ts).
import { ATTACHMENT_DIR } from '../project/paths.js';
import { facturxFile } from './facturx.js';
import { documentMetadataLine, taggingPreamble } from './tagging.js';
import type { OutputAttachment, OutputMetadata, OutputSpec } from './spec.js';

export { ATTACHMENT_DIR };

/** \documentclass with its options and class, possibly over several lines. */
const DOCUMENTCLASS = /^[^%\n]*?\\documentclass\s*(?:\[[^\]]*\])?\s*\{[^}]*\}/m;

/** Whether the main source has the \documentclass line the output step injects after. */
export function hasDocumentClass(source: string): boolean {
  return DOCUMENTCLASS.test(source);
}

/** A TeX-safe spelling of `text` inside an .xmpdata field (pdfx turns it back into text). */
export function xmpText(text: string): string {
  return text.replace(/[\\{}%#&$^_~]/g, (c) => {
    if (c === '\\') return '\\textbackslash ';
    // pdfx writes \& as the XML entity; a bare & would break the XMP.
    if (c === '{' || c === '}' || c === '%' || c === '&') return `\\${c}`;
    return `\\string${c}`;
  });
}

/** The .xmpdata pdfx reads: the caller's metadata, each value escaped. */
export function xmpdata(metadata: OutputMetadata = {}): string {
  const lines: string[] = [];
  if (metadata.title) lines.push(`\\Title{${xmpText(metadata.title)}}`);
  if (metadata.author) lines.push(`\\Author{${xmpText(metadata.author)}}`);
  if (metadata.subject) lines.push(`\\Subject{${xmpText(metadata.subject)}}`);
  if (metadata.keywords?.length) lines.push(`\\Keywords{${metadata.keywords.map(xmpText).join('\\sep ')}}`);
  if (metadata.lang) lines.push(`\\Language{${xmpText(metadata.lang)}}`);
  if (metadata.creator) lines.push(`\\CreatorTool{${xmpText(metadata.creator)}}`);
  return `${lines.join('\n')}\n`;
}

/**
 * A text as the body of a PDF string, given to TeX as data: UTF-16BE with its byte order mark,
 * every byte an octal escape, spelled with \@backslashchar and digits, so no character of the
 * caller's text ever reaches TeX's tokenizer (a "\" or "#" in it is one more byte).
 */
export function pdfStringData(text: string): string {
  const bytes = Buffer.from(`\uFEFF${text}`, 'utf16le').swap16();
  return [...bytes].map((b) => `\\@backslashchar${b.toString(8).padStart(3, '0')}`).join('');
}

/**
 * One \embedfile for `attachment`, its file in ATTACHMENT_DIR. The name and MIME type follow
 * plain-character rules (output.ts, the schema); the description is data (pdfStringData):
 * embedfile's string method `psd` hands it to \pdfstringdef, which here, inside the group,
 * only expands what it is given, as the string is a PDF string already.
 */
function embed(attachment: OutputAttachment): string {
  const keys = [
    `filespec={${attachment.name}}`,
    `ucfilespec={${attachment.name}}`,
    `mimetype={${attachment.mimeType}}`,
    `afrelationship={/${attachment.relationship}}`,
    ...(attachment.description ? ['stringmethod=psd', `desc={${pdfStringData(attachment.description)}}`] : []),
  ];
  const line = `\\embedfile[${keys.join(',')}]{${ATTACHMENT_DIR}/${attachment.name}}`;
  if (!attachment.description) return line;
  return `\\makeatletter\\begingroup\\def\\pdfstringdef#1#2{\\edef#1{#2}}${line}\\endgroup\\makeatother`;
}

/**
 * The job's source with what `output` needs injected right after \documentclass, or null
 * when the source does not change. Throws when the main source has no \documentclass line.
 */
export function outputSource(source: string, output: OutputSpec, compiler: Compiler, now: Date = new Date()): string | null {
  const lines: string[] = [];
  // Tagged: the kernel writes the standards' metadata (tagging.ts), pdfx is not loaded.
  const metadataLine = documentMetadataLine(output);
  lines.push(...taggingPreamble(output));
  if (output.pdfStandard && !metadataLine) {
    // XeTeX has no \pdfcreationdate: pdfx then stops with an error (and a constant 2018 date)
    // unless shell escape runs its Lua helper. The time the job starts, given here, is the date
    // pdfx writes into both Info and XMP, so xelatex exits cleanly and the two agree (pdfx
    // parses it with a catcode-12 D, hence \string). pdfTeX has the primitive: without the
    // line, its preamble is the same for every job (a paused preamble can serve it).
    if (compiler !== 'pdflatex') lines.push(`\\ifdefined\\pdfcreationdate\\else\\edef\\pdfcreationdate{\\string ${pdfDate(now)}}\\fi`);
    lines.push(`\\usepackage[${output.pdfStandard}]{pdfx}`);
  }
  if (output.attachments?.length) {
    lines.push('\\usepackage{embedfile}');
    lines.push(...output.attachments.map(embed));
  }
  if (lines.length === 0) return null;
  const match = DOCUMENTCLASS.exec(source);
  if (!match) throw new OutputSourceError();
  const end = match.index + match[0].length;
  // \DocumentMetadata must come before \documentclass: on a line of its own right before that line (the match starts the line).
  const head = metadataLine ? `${source.slice(0, match.index)}${metadataLine}\n${source.slice(match.index, end)}` : source.slice(0, end);
  return `${head}\n${lines.join('\n')}\n${source.slice(end)}`;
}

/** A PDF date string in UTC, as \\pdfcreationdate gives it: D:YYYYMMDDHHmmSS+00'00'. */
export function pdfDate(date: Date): string {
  return `D:${date.toISOString().slice(0, 19).replace(/[-T:]/g, '')}+00'00'`;
}

/**
 * Job files the output step adds: the .xmpdata (PDF/A), the attachments, and for a Factur-X
 * invoice pdfx's XMP template with the fx properties (facturx.ts), unless the job brings its
 * own (`jobFiles`: the names of the job's files).
 */
export function outputFiles(output: OutputSpec, main: string, jobFiles: ReadonlyArray<string> = []): Array<{ name: string; data: Buffer }> {
  const template = facturxFile(output);
  return [
    ...(output.pdfStandard && !output.tagging ? [{ name: `${main}.xmpdata`, data: Buffer.from(xmpdata(output.metadata)) }] : []),
    ...(output.attachments ?? []).map((a) => ({ name: `${ATTACHMENT_DIR}/${a.name}`, data: a.data })),
    ...(template && !jobFiles.includes(template.name) ? [template] : []),
  ];
}

export class OutputSourceError extends Error {
  constructor() {
    super('PDF/A and attachments need the \\documentclass line in the main source');
  }
}
