// Font assets (.otf, .ttf, .ttc) for xelatex and lualatex: a bounded reader of the sfnt table
// directory, run in process. It reads only fixed-size headers (at most 64 fonts of 512 tables
// each), follows no pointers beyond checking that each table lies inside the file, and runs
// no font code, so a hostile file costs microseconds and cannot reach a rasteriser; the TeX
// engine's own font loader then reads the file inside the sandbox. It refuses what no engine
// could load: a truncated directory, tables outside the file, or a font without the tables
// every OpenType font needs.
export const FONT_LABEL = { otf: 'OpenType font', ttf: 'TrueType font', ttc: 'TrueType collection' } as const;

const MAX_TABLES = 512;
const MAX_FONTS_IN_COLLECTION = 64;
const HEAD_MAGIC = 0x5f0f3cf5;
/** Tables every sfnt font has (OpenType spec, "Required tables"), plus one outline table set. */
const REQUIRED = ['cmap', 'head', 'hhea', 'hmtx', 'maxp', 'name'];
const OUTLINES = [['glyf', 'loca'], ['CFF '], ['CFF2']];

/** Why the bytes are not a usable font, or null when the table directory is sound. */
export function checkFont(data: Buffer): string | null {
  if (data.length < 12) return 'the file is shorter than a font header';
  if (data.toString('latin1', 0, 4) !== 'ttcf') return checkFace(data, 0);
  const fonts = data.readUInt32BE(8);
  if (fonts < 1 || fonts > MAX_FONTS_IN_COLLECTION) return `the collection claims ${fonts} fonts`;
  if (12 + fonts * 4 > data.length) return 'the collection header is truncated';
  for (let i = 0; i < fonts; i++) {
    const problem = checkFace(data, data.readUInt32BE(12 + i * 4));
    if (problem) return `font ${i + 1} of the collection: ${problem}`;
  }
  return null;
}

function checkFace(data: Buffer, at: number): string | null {
  if (at + 12 > data.length) return 'the font header lies outside the file';
  const version = data.readUInt32BE(at);
  if (version !== 0x00010000 && version !== 0x4f54544f && version !== 0x74727565) return 'the font header has no sfnt version';
  const count = data.readUInt16BE(at + 4);
  if (count === 0 || count > MAX_TABLES) return `the font claims ${count} tables`;
  if (at + 12 + count * 16 > data.length) return 'the table directory is truncated';
  const tables = new Map<string, { offset: number; length: number }>();
  for (let i = 0; i < count; i++) {
    const record = at + 12 + i * 16;
    const tag = data.toString('latin1', record, record + 4);
    if (!/^[\x20-\x7e]{4}$/.test(tag)) return 'a table tag is not printable';
    const offset = data.readUInt32BE(record + 8);
    const length = data.readUInt32BE(record + 12);
    if (offset + length > data.length) return `table "${tag.trim()}" lies outside the file`;
    tables.set(tag, { offset, length });
  }
  const missing = REQUIRED.filter((tag) => !tables.has(tag));
  if (missing.length > 0) return `required tables missing: ${missing.join(', ')}`;
  if (!OUTLINES.some((set) => set.every((tag) => tables.has(tag)))) return 'no glyph outlines (glyf/loca or CFF)';
  const head = tables.get('head')!;
  if (head.length < 54 || data.readUInt32BE(head.offset + 12) !== HEAD_MAGIC) return 'the head table is damaged';
  return null;
}
