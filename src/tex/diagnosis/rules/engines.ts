// Errors about the engine and its fonts: a package that needs another compiler, a font
// name fontspec cannot find.
import { PACKAGE_ENGINES } from '../packages.js';
import { installedFonts } from '../unicode.js';
import { closest, MAX_SUGGESTED_NAME } from '../names.js';
import { escape, onLine, otherEngine, type Rule } from './finding.js';

const ENGINE_MESSAGE = /requires either XeTeX or LuaTeX|Cannot be run with pdf|requires LuaTeX|requires XeTeX|only (supports|works with) (Lua|Xe)|must be (used|run) with (Lua|Xe)|needs? (Lua|Xe)TeX|not supported with (pdf|Xe|Lua)/i;

export const engineRequirement: Rule = ({ block, engine, source, line }) => {
  const fromMessage = /(?:Package|Class) ([\w-]+) Error/.exec(block.message)?.[1];
  const fromFile = block.file ? /([\w-]+)\.sty$/.exec(block.file)?.[1] : undefined;
  const pkg = [fromMessage, fromFile].find((p) => p !== undefined && PACKAGE_ENGINES[p] !== undefined);
  const engines = pkg ? PACKAGE_ENGINES[pkg] : undefined;
  if (!pkg || !engines || engines.includes(engine) || !(ENGINE_MESSAGE.test(block.message) || fromFile === pkg)) return undefined;
  const at = source?.usePackageLine(pkg) ?? (block.file && !/main\.tex$/.test(block.file) ? undefined : line);
  const fix = `Compile with ${engines.join(' or ')} instead of ${engine} (${otherEngine(engines)} in the request): the package ${pkg} loaded${onLine(at)} does not work with ${engine}. Or remove \\usepackage{${pkg}} and the commands that need it.`;
  return {
    error_class: 'fatal_error',
    summary: `The package "${pkg}" only works with ${engines.join(' or ')}, not with ${engine}.`,
    suggested_fix: fix,
    symbol: pkg,
    line: at,
    hint: `Set "compiler" to "${engines[0]}" (package ${pkg} needs it) and compile again.`,
  };
};

export const fontNotFound: Rule = ({ block, source, line }) => {
  const m = /The font "([^"]+)" cannot be found/.exec(block.message);
  if (!m?.[1]) return undefined;
  const fonts = installedFonts();
  // fontspec may print the name without its spaces (lualatex): report it as the source has it.
  const loose = new RegExp([...m[1].replace(/\s+/g, '')].map(escape).join('\\s*'), 'i');
  // A name no font has is not looked for: the pattern is as long as the name, tried on every line.
  const at = (m[1].length <= MAX_SUGGESTED_NAME ? source?.find(loose) : undefined) ?? line;
  const font = (at !== undefined ? loose.exec(source?.line(at) ?? '')?.[0] : undefined) ?? m[1];
  const twin = METRIC_TWINS[font.toLowerCase()];
  const near = twin && fonts.includes(twin) ? twin : closest(font, fonts, { caseInsensitive: true, max: 3 });
  const choices = ['DejaVu Serif', 'DejaVu Sans', 'Liberation Serif', 'Liberation Sans', 'Noto Serif'].filter((f) => fonts.includes(f));
  const fix = near
    ? `Change the font name "${font}"${onLine(at)} to "${near}"${twin ? ' (installed here, with the same letter widths)' : ''}.`
    : `Replace "${font}"${onLine(at)} with a font installed on this server${choices.length ? `, e.g. ${choices.map((f) => `"${f}"`).join(', ')}` : ''}.`;
  return {
    error_class: 'fatal_error',
    summary: `The font "${font}" is not installed on this server.`,
    suggested_fix: fix,
    symbol: font,
    line: at,
    hint: fix.replace(/ \(.*\)\.$/, '.').replace(/\.$/, ' and compile again.'),
  };
};

/** Free fonts with the same metrics as common commercial ones. */
const METRIC_TWINS: Record<string, string> = {
  'times new roman': 'Liberation Serif',
  times: 'Liberation Serif',
  arial: 'Liberation Sans',
  helvetica: 'Liberation Sans',
  'courier new': 'Liberation Mono',
};
