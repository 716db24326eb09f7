// A text watermark as a one-page PDF that qpdf stamps over the document's pages (--overlay):
// Helvetica-Bold in WinAnsi (the caller's text is checked to be Latin-1), rotated about the
// page centre, with its opacity in an ExtGState. qpdf shrinks and centres the stamp on
// every page, so one square stamp fits any page size.
import { pdfFromObjects } from './pdf-objects.js';
import type { OutputWatermark } from './spec.js';

const SIZE = 600;

/** `text` as a PDF literal string in WinAnsi (Latin-1 printable characters). */
function pdfString(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '\\' || char === '(' || char === ')') out += `\\${char}`;
    else if (code >= 0x20 && code < 0x7f) out += char;
    else out += `\\${code.toString(8).padStart(3, '0')}`;
  }
  return `(${out})`;
}

const num = (value: number) => (Math.round(value * 1000) / 1000).toString();

export function watermarkPdf(mark: OutputWatermark): Buffer {
  const length = [...mark.text].length;
  // Helvetica-Bold capitals are up to 0.72 em wide; the line fits inside the square at any angle.
  const fontSize = Math.max(8, Math.min(96, (SIZE * 0.9) / (0.72 * length)));
  const width = 0.72 * fontSize * length;
  const radians = (mark.angle * Math.PI) / 180;
  const [cos, sin] = [Math.cos(radians), Math.sin(radians)];
  // Start of the baseline so the line's centre is the square's centre.
  const x = SIZE / 2 - cos * (width / 2) + sin * (fontSize / 3);
  const y = SIZE / 2 - sin * (width / 2) - cos * (fontSize / 3);
  const [r, g, b] = mark.color.map(num);
  const content = `q /G1 gs ${r} ${g} ${b} rg BT /F1 ${num(fontSize)} Tf ${num(cos)} ${num(sin)} ${num(-sin)} ${num(cos)} ${num(x)} ${num(y)} Tm ${pdfString(mark.text)} Tj ET Q\n`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${SIZE} ${SIZE}] /Resources << /Font << /F1 4 0 R >> /ExtGState << /G1 5 0 R >> >> /Contents 6 0 R >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>',
    `<< /Type /ExtGState /ca ${num(mark.opacity)} /CA ${num(mark.opacity)} >>`,
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}endstream`,
  ];
  return pdfFromObjects(objects);
}
