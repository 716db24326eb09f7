// Files TeX could not find: a class or package not installed (or misspelt), an image or a
// text file the request did not carry.
import { isAssetName, isAssetStem } from '../../../asset-name.js';
import { GRAPHICS_EXTENSIONS } from '../../project/graphics.js';
import { PACKAGES, PACKAGE_ENGINES, PACKAGE_REPLACEMENTS } from '../packages.js';
import { closest, INSTALLED_CLASSES, UNINSTALLED_CLASSES } from '../names.js';
import { escape, onLine, usepackage, type Rule } from './finding.js';

export const missingFile: Rule = ({ block, source, line, engine, catalog: cat, project }) => {
  const m = /File `([^']+)' not found|Unable to load picture or PDF file '([^']+)'/.exec(block.message);
  const file = m?.[1] ?? m?.[2];
  if (!file) return undefined;
  const dot = file.lastIndexOf('.');
  const ext = dot > 0 && !file.slice(dot).includes('/') ? file.slice(dot + 1).toLowerCase() : '';
  const base = ext ? file.slice(0, dot) : file;

  if (ext === 'cls') {
    const at = source?.find(/\\documentclass/) ?? line;
    // A class the project brings (its .cls among the files) first: the caller sent it to be used.
    const near = UNINSTALLED_CLASSES.includes(base) ? undefined : ((project ? closest(base, project.classes) : undefined) ?? closest(base, INSTALLED_CLASSES) ?? (cat ? closest(base, cat.classNames()) : undefined));
    const fix = near
      ? `Change \\documentclass{${base}}${onLine(at)} to \\documentclass{${near}}.`
      : `Change \\documentclass{${base}}${onLine(at)} to an installed class such as article, report, book, beamer, amsart or scrartcl.`;
    return {
      error_class: 'missing_document_class',
      summary: `The document class "${base}" is not installed on this server.`,
      suggested_fix: fix,
      symbol: base,
      line: at,
      hint: fix.replace(/\.$/, ' and compile again.'),
    };
  }

  if (ext === 'sty') {
    const at = source?.usePackageLine(base) ?? line;
    // Well-known names first; then every package installed here (one edit away, and only one).
    const typo = (project ? closest(base, project.packages) : undefined) ?? closest(base, PACKAGE_NAMES) ?? (cat ? closest(base, cat.packageNames()) : undefined);
    const replacement = PACKAGE_REPLACEMENTS[base];
    let fix: string;
    let pkg: string | undefined;
    if (replacement) {
      pkg = replacement.package;
      fix = pkg
        ? `Replace \\usepackage{${base}}${onLine(at)} with ${usepackage(pkg)} and ${replacement.change}.`
        : `Remove \\usepackage{${base}}${onLine(at)}: ${replacement.change}.`;
    } else if (typo) {
      pkg = typo;
      fix = `Change \\usepackage{${base}}${onLine(at)} to \\usepackage{${typo}}.`;
    } else {
      fix = `Remove \\usepackage{${base}}${onLine(at)} and the commands that need it; if it is your own package, paste its definitions into the preamble instead.`;
    }
    if (pkg && PACKAGE_ENGINES[pkg] && !PACKAGE_ENGINES[pkg]?.includes(engine)) pkg = undefined;
    return {
      error_class: 'missing_package',
      summary: `The package "${base}" is not installed on this server.`,
      suggested_fix: fix,
      ...(pkg ? { suggested_package: pkg } : {}),
      symbol: base,
      line: at,
      retryable: !(replacement && !replacement.package && /cannot be typeset/.test(replacement.change)),
      hint: fix.replace(/\.$/, '').replace(/:.*$/, '') + ' and compile again.',
    };
  }

  if (ext === '' || (GRAPHICS_EXTENSIONS as readonly string[]).includes(ext)) {
    const at = line ?? source?.find(new RegExp(escape(file)));
    // Asset names are flat (no folders) and simple; graphicx finds `logo.png` for {logo}.
    const valid = isAssetName(file) || isAssetStem(file);
    const stem = (file.split('/').at(-1) ?? file).replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 59) || 'image';
    const sendAs = ext ? `${stem}.${ext}` : `${stem}.png`;
    const how = '"assets" (file name → base64) or "use_stored_assets" (a stored asset)';
    let fix: string;
    if (valid && ext) fix = `Send the file "${file}" in ${how}, or remove the line that uses it${onLine(at)}.`;
    else if (valid) fix = `Send the image as "${file}.png" (or .pdf, .jpg) in ${how}; \\includegraphics{${file}} finds it without the extension. Or remove the line that uses it${onLine(at)}.`;
    else fix = `Send the file as "${sendAs}" in ${how} and change the reference${onLine(at)} to {${sendAs}}: asset names cannot contain folders or other characters than letters, digits, _ and -. Or remove the line that uses it.`;
    return {
      error_class: 'missing_asset',
      summary: `The file "${file}" is referenced${onLine(at)} but was not sent with the compile request.`,
      suggested_fix: fix,
      symbol: file,
      line: at,
      hint: valid
        ? `Add "${ext ? file : `${file}.png`}" to "assets" (or "use_stored_assets") in the request, or remove its use${onLine(at)}, and compile again.`
        : `Send the file as "${sendAs}" in "assets", reference it as {${sendAs}}${onLine(at)}, and compile again.`,
    };
  }

  if (['tex', 'bib', 'bst', 'cfg', 'def', 'csv', 'dat', 'txt', 'bbx', 'cbx', 'ltx'].includes(ext)) {
    const at = source?.find(new RegExp(escape(base))) ?? line;
    const fix = `Send "${file}" in "files" (file name → its text), or paste its content into main.tex where it is used${onLine(at)}.`;
    return {
      error_class: 'missing_asset',
      summary: `The file "${file}" does not exist in the compile: only main.tex, the sent files and the assets are there.`,
      suggested_fix: fix,
      symbol: file,
      line: at,
      hint: `Send "${file}" in "files" (or inline its content into main.tex${onLine(at)}) and compile again.`,
    };
  }
  return undefined;
};

const PACKAGE_NAMES = [...new Set(PACKAGES.map((p) => p.package).concat(['amsfonts', 'graphics', 'color', 'inputenc', 'fontenc', 'lmodern', 'textcomp', 'babel', 'hyperref', 'subfigure', 'times', 'mathptmx', 'helvet', 'courier', 'palatino', 'tgtermes', 'parskip', 'lastpage', 'colortbl', 'xparse', 'alphabeta']))];
