// `project_zip` of a compile request (an extension of SPEC 1.5.0): a whole project as the
// base64 of a zip archive, read as hostile input. The central directory is parsed here with
// fixed bounds (entries, sizes, compression ratio, depth); links, devices, encrypted or
// zip64 entries, paths that leave the project (tex/project/paths.ts) and duplicates are
// refused before anything is inflated, and each entry inflates with a hard output cap (zlib's
// maxOutputLength), so a bomb stops at the cap whatever its headers claim. The result is the
// same `latex` + `files` a caller could have sent, so every later rule applies unchanged;
// what a local build left beside the main file (main.pdf, thesis.aux) is dropped, not refused.
import { crc32, inflateRawSync } from 'node:zlib';
import { decodeBase64, formatOfName, quoteName } from '../assets/validate.js';
import { errors, type ServiceError } from '../errors.js';
import { isJobOwnPath, PATH_BYTES_MAX, PATH_FOLDERS_MAX, pathProblem, sameFileKey } from '../tex/project/paths.js';
import { MAIN } from '../tex/sandbox/workspace.js';
import { isClutter } from './clutter.js';
import { chooseMainFile } from './main-file.js';

/** Entries in the central directory, folders included. */
export const ZIP_ENTRIES_MAX = 1000;
/** Uncompressed bytes of one entry and of the whole archive. */
export const ZIP_ENTRY_BYTES_MAX = 16 * 1024 * 1024;
export const ZIP_TOTAL_BYTES_MAX = 48 * 1024 * 1024;
/** Uncompressed ÷ compressed above this is a bomb (text deflates ~5×; 100× only for filler). Entries under 64 KiB are exempt. */
export const ZIP_RATIO_MAX = 100;
const RATIO_FREE_BYTES = 64 * 1024;

function refused(reason: string, details: { entry?: string; limit?: number; candidates?: string[] } = {}): ServiceError {
  const where = details.entry !== undefined ? `entry ${quoteName(details.entry)}: ` : '';
  return errors.invalid_project_zip(`project_zip: ${where}${reason}`, { reason, ...details });
}

interface Entry {
  name: string;
  method: number;
  flags: number;
  compressed: number;
  size: number;
  crc: number;
  localOffset: number;
}


function centralDirectory(zip: Buffer): Entry[] {
  const searchFrom = Math.max(0, zip.length - 22 - 0xffff);
  let eocd = -1;
  for (let at = zip.length - 22; at >= searchFrom; at--) {
    if (zip.readUInt32LE(at) === 0x06054b50) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw refused('the data is not a zip archive (no end of central directory).');
  const count = zip.readUInt16LE(eocd + 10);
  const offset = zip.readUInt32LE(eocd + 16);
  if (count === 0xffff || offset === 0xffffffff) throw refused('zip64 archives are not accepted.');
  if (count > ZIP_ENTRIES_MAX) throw refused(`the archive has ${count} entries; the limit is ${ZIP_ENTRIES_MAX}.`, { limit: ZIP_ENTRIES_MAX });
  const entries: Entry[] = [];
  let at = offset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== 0x02014b50) throw refused('the central directory is damaged.');
    const nameLength = zip.readUInt16LE(at + 28);
    const next = at + 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    if (next > zip.length) throw refused('the central directory is damaged.');
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const madeOnUnix = zip.readUInt16LE(at + 4) >> 8 === 3;
    const type = (zip.readUInt32LE(at + 38) >>> 16) & 0o170000;
    if (madeOnUnix && type === 0o120000) throw refused('symbolic links are not accepted.', { entry: name });
    if (madeOnUnix && type !== 0 && type !== 0o100000 && type !== 0o040000) throw refused('only files and folders are accepted.', { entry: name });
    entries.push({
      name,
      flags: zip.readUInt16LE(at + 8),
      method: zip.readUInt16LE(at + 10),
      crc: zip.readUInt32LE(at + 16),
      compressed: zip.readUInt32LE(at + 20),
      size: zip.readUInt32LE(at + 24),
      localOffset: zip.readUInt32LE(at + 42),
    });
    at = next;
  }
  return entries;
}

/** `path` of the archive's `entry`; without `depth` (a name as archived, which may still lose its top folder) any depth and length pass. */
function checkEntryName(path: string, entry: string, depth: boolean): void {
  const problem = pathProblem(path.endsWith('/') ? path.slice(0, -1) : path);
  if (!problem || (!depth && (problem.limit === PATH_FOLDERS_MAX || problem.limit === PATH_BYTES_MAX))) return;
  throw refused(problem.why, { entry, ...(problem.limit !== undefined ? { limit: problem.limit } : {}) });
}

/** Files the job reads by its own name (pdfx's .xmpdata, a precompiled .bbl): thesis.bbl is also main.bbl. */
const READ_BY_JOB_NAME = ['bbl', 'xmpdata'];

function inflate(zip: Buffer, entry: Entry): Buffer {
  if (entry.flags & 1) throw refused('encrypted entries are not accepted.', { entry: entry.name });
  if (entry.method !== 0 && entry.method !== 8) throw refused(`compression method ${entry.method} is not accepted (use deflate or store).`, { entry: entry.name });
  const at = entry.localOffset;
  if (at + 30 > zip.length || zip.readUInt32LE(at) !== 0x04034b50) throw refused('the local header is damaged.', { entry: entry.name });
  const start = at + 30 + zip.readUInt16LE(at + 26) + zip.readUInt16LE(at + 28);
  if (start + entry.compressed > zip.length) throw refused('the entry lies outside the archive.', { entry: entry.name });
  const raw = zip.subarray(start, start + entry.compressed);
  let data: Buffer;
  if (entry.method === 0) data = raw;
  else {
    try {
      data = inflateRawSync(raw, { maxOutputLength: entry.size + 1 });
    } catch {
      throw refused('the entry does not inflate to the size its header states (damaged or a bomb).', { entry: entry.name });
    }
  }
  if (data.length !== entry.size || crc32(data) !== entry.crc) throw refused('the entry does not match its stated size and checksum.', { entry: entry.name });
  return data;
}

/** A common single top folder (GitHub's "repo-main/") is dropped when no .tex lies at the top. */
function stripTopFolder(names: string[]): (name: string) => string {
  const tops = new Set(names.map((name) => (name.includes('/') ? name.slice(0, name.indexOf('/')) : '')));
  if (tops.size !== 1 || tops.has('')) return (name) => name;
  const prefix = `${[...tops][0]}/`;
  return (name) => name.slice(prefix.length);
}

/** The main file (src/compile/main-file.ts); none or several is refused with the list. */
function chooseMain(texts: Map<string, string>): string {
  const choice = chooseMainFile(texts);
  if (choice.main !== null) return choice.main;
  const { candidates } = choice;
  throw refused(
    candidates.length === 0
      ? 'no main file: put main.tex at the top of the archive, or one .tex file with \\documentclass.'
      : `${candidates.length} top-level .tex files contain \\documentclass; name the main one main.tex.`,
    { candidates },
  );
}

/** Unpacks `project_zip` into the `latex` and `files` fields of an ordinary compile request. */
export function expandProjectZip(base64: unknown): { latex: string; files: Record<string, string | { base64: string }> } {
  const zip = decodeBase64('project_zip', base64);
  const entries = centralDirectory(zip);
  for (const entry of entries) checkEntryName(entry.name, entry.name, false);
  const files = entries.filter((entry) => !entry.name.endsWith('/'));
  const relative = stripTopFolder(files.map((entry) => entry.name));
  const seen = new Set<string>();
  let total = 0;
  const kept: Array<{ name: string; entry: Entry }> = [];
  // Names and stated sizes of every entry first: a refusal costs no inflation.
  for (const entry of files) {
    const name = relative(entry.name);
    if (isClutter(name)) continue;
    checkEntryName(name, entry.name, true);
    if (seen.has(sameFileKey(name))) throw refused('another entry has the same name (names are compared without case).', { entry: entry.name });
    seen.add(sameFileKey(name));
    if (entry.size > ZIP_ENTRY_BYTES_MAX) throw refused(`the entry is ${entry.size} bytes uncompressed; the limit is ${ZIP_ENTRY_BYTES_MAX}.`, { entry: entry.name, limit: ZIP_ENTRY_BYTES_MAX });
    total += entry.size;
    if (total > ZIP_TOTAL_BYTES_MAX) throw refused(`the archive holds more than ${ZIP_TOTAL_BYTES_MAX} bytes uncompressed.`, { limit: ZIP_TOTAL_BYTES_MAX });
    kept.push({ name, entry });
  }
  const texts = new Map<string, string>();
  const binary = new Map<string, string>();
  for (const { name, entry } of kept) {
    if (entry.size > RATIO_FREE_BYTES && entry.size > entry.compressed * ZIP_RATIO_MAX) {
      throw refused(`the entry compresses more than ${ZIP_RATIO_MAX} to 1 (a zip bomb?).`, { entry: entry.name, limit: ZIP_RATIO_MAX });
    }
    const data = inflate(zip, entry);
    if (formatOfName(name)) binary.set(name, data.toString('base64'));
    // A binary of another type (the slides' .pptx, a .xlsx of the data, a .zip) is nothing TeX
    // reads: latexmk never opens it, so it is skipped rather than refused as text with a NUL.
    else if (!data.includes(0)) texts.set(name, data.toString('utf8'));
  }
  const main = chooseMain(texts);
  const latex = texts.get(main)!;
  texts.delete(main);
  const stem = main.slice(0, -'.tex'.length);
  // The main file's own earlier output (thesis.pdf, main.log beside it) is not part of the project.
  const leftover = (name: string) => {
    const prefix = `${stem.toLowerCase()}.`;
    return isJobOwnPath(name) || (name.toLowerCase().startsWith(prefix) && isJobOwnPath(`${MAIN}.${name.slice(prefix.length)}`));
  };
  const out: Record<string, string | { base64: string }> = {};
  for (const [name, text] of texts) if (!leftover(name)) out[name] = text;
  for (const [name, data] of binary) if (!leftover(name)) out[name] = { base64: data };
  if (stem !== MAIN) {
    for (const ext of READ_BY_JOB_NAME) {
      const own = texts.get(`${stem}.${ext}`);
      if (own !== undefined && !texts.has(`${MAIN}.${ext}`)) out[`${MAIN}.${ext}`] = own;
    }
  }
  return { latex, files: out };
}
