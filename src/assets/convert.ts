// SVG and EPS in a document without shell escape: each SVG asset is converted to PDF here
// with rsvg-convert, each EPS/PS with Ghostscript (-dSAFER), inside the same bubblewrap
// sandbox TeX runs in (no network, nothing of the host visible, CPU/memory capped, killed at
// a timeout), reading stdin and writing stdout. The job then gets `name.svg.pdf` beside
// `name.svg` (`name-eps-converted-to.pdf` beside `name.eps`, epstopdf's own name, so a
// document that loads epstopdf finds it too) plus a graphics.cfg that teaches graphicx to
// use it, so \includegraphics{name.svg} and \includegraphics{name} just work on every engine.
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errors, type ServiceError } from '../errors.js';
import { hostPath, imageTool } from '../tex/image/tools.js';
import type { ProcessLimits } from '../tex/sandbox/sandbox.js';
import { runSandboxed } from '../tex/sandbox/sandboxed.js';
import { CONVERTER_UID, sandboxUid } from '../tex/sandbox/uids.js';
import { quoteName } from './validate.js';
import { defaultImageRoot } from '../tex/image/default.js';

/** Wall clock of one conversion. */
export const SVG_CONVERT_TIMEOUT_MS = 15_000;
/** Largest PDF a conversion may produce. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
const LIMITS: ProcessLimits = { cpuSeconds: 15, fileBytes: 1024 * 1024, memoryBytes: 1024 * 1024 * 1024, processes: 256 };

/** The file name the converted PDF gets in the job: two dots, so no asset name can clash. */
export function convertedName(svgName: string): string {
  return `${svgName}.pdf`;
}

/** epstopdf's name for the PDF of `figures/fig1.eps`: `figures/fig1-eps-converted-to.pdf`. */
export function convertedPostScriptName(name: string): string {
  const dot = name.lastIndexOf('.');
  return `${name.slice(0, dot)}-${name.slice(dot + 1)}-converted-to.pdf`;
}

type Kind = 'SVG' | 'PostScript';

function refused(name: string, kind: Kind, why: string): ServiceError {
  return errors.invalid_asset_format(`Asset ${quoteName(name)}: the ${kind} could not be converted to PDF (${why}).`, {
    asset: name,
    expected_format: kind === 'SVG' ? 'svg' : 'postscript',
  });
}

export function convertSvg(name: string, svg: string, options: { isolate: boolean; timeoutMs?: number }): Promise<Buffer> {
  return convert(name, 'SVG', ['rsvg-convert', '--format=pdf'], svg, options);
}

/**
 * EPS or PS to PDF with Ghostscript: -dSAFER (no file access beyond its own), -dEPSCrop (the
 * figure's bounding box is the page), messages to stderr so stdout is only the PDF.
 */
export function convertPostScript(name: string, data: Buffer, options: { isolate: boolean; timeoutMs?: number }): Promise<Buffer> {
  const gs = ['gs', '-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', '-dEPSCrop', '-sstdout=%stderr', '-sDEVICE=pdfwrite', '-sOutputFile=-', '-'];
  return convert(name, 'PostScript', gs, croppedToBoundingBox(data), options);
}

/**
 * Ghostscript crops to the bounding box only a file whose first line says EPSF; epstopdf (what
 * latexmk's pdflatex runs) crops any file with a %%BoundingBox comment, as REVTeX's samples'
 * `%!PS-Adobe-3.0` figures are: without it each became an A4 page, and the samples three
 * pages longer. Such a file gets epstopdf's own prologue: the box as the page, moved to the origin.
 */
function croppedToBoundingBox(data: Buffer): Buffer {
  const head = data.subarray(0, 4096).toString('latin1');
  if (!head.startsWith('%!') || /^%!PS-Adobe-\d\.\d EPSF/.test(head)) return data;
  const box = /^%%BoundingBox:[ \t]*(-?\d+)[ \t]+(-?\d+)[ \t]+(-?\d+)[ \t]+(-?\d+)[ \t]*$/m.exec(head);
  if (!box) return data;
  const [llx, lly, urx, ury] = box.slice(1).map(Number) as [number, number, number, number];
  if (urx <= llx || ury <= lly) return data;
  const prologue = `%!PS\n<< /PageSize [${urx - llx} ${ury - lly}] >> setpagedevice\n${-llx} ${-lly} translate\n`;
  return Buffer.concat([Buffer.from(prologue), data]);
}

async function convert(name: string, kind: Kind, argv: string[], input: string | Buffer, options: { isolate: boolean; timeoutMs?: number }): Promise<Buffer> {
  const workspace = await mkdtemp(join(tmpdir(), 'quire-convert-'));
  const uid = sandboxUid(CONVERTER_UID);
  const timeoutMs = options.timeoutMs ?? SVG_CONVERT_TIMEOUT_MS;
  try {
    if (uid !== undefined) await chown(workspace, uid, uid);
    const spec = { workspace, env: { XDG_CACHE_HOME: '/tmp' }, limits: LIMITS, isolate: options.isolate, uid, root: defaultImageRoot() };
    const result = await runSandboxed(spec, argv, { stdin: input, timeoutMs, maxOutput: MAX_OUTPUT_BYTES }).catch((err: Error) => {
      throw errors.internal_error(`The ${kind} converter could not be started: ${err.message}`);
    });
    if (result.killed === 'timeout') throw refused(name, kind, `it took longer than ${timeoutMs / 1000} s`);
    if (result.killed === 'output') throw refused(name, kind, 'the PDF would be too large');
    const pdf = result.stdout;
    if (result.code !== 0 || !pdf.subarray(0, 5).equals(Buffer.from('%PDF-'))) {
      const detail = result.stderr
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith('Fontconfig') && !line.startsWith('GPL Ghostscript'))[0];
      throw refused(name, kind, detail ?? (result.signal ? `killed by ${result.signal}` : `exit code ${result.code}`));
    }
    return pdf;
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

// Loaded by graphics.sty from the job directory before the system's own graphics.cfg (the
// working directory comes first in TEXINPUTS); it defines the SVG and EPS rules and then
// carries on with the system file's driver selection, appended below.
const SVG_RULE = String.raw`% Quire: SVG assets arrive converted to PDF as <name>.svg.pdf (see the Quire docs, docs/api.md, "SVG").
% Graphics type "quiresvg" reads and includes that PDF with the engine's own PDF code;
% it switches \Gin@ext to .svg.pdf first because xetex.def reads \Gin@base\Gin@ext.
% Compared as strings: a parsed file name has other-catcode letters, the extension list not.
\edef\quire@svg{\detokenize{.svg}}\edef\quire@SVG{\detokenize{.SVG}}
\def\quire@pdfext{%
  \edef\quire@ext{\detokenize\expandafter{\Gin@ext}}%
  \ifx\quire@ext\quire@svg\def\Gin@ext{.svg.pdf}\fi
  \ifx\quire@ext\quire@SVG\def\Gin@ext{.SVG.pdf}\fi}
\def\Gread@quiresvg#1{\quire@pdfext\Gread@pdf{\Gin@base\Gin@ext}}
\def\Ginclude@quiresvg#1{\quire@pdfext\Ginclude@pdf{\Gin@base\Gin@ext}}
\def\quire@svgrule#1{{quiresvg}{\Gin@ext}{#1}}
% EPS and PS arrive as <name>-eps-converted-to.pdf (epstopdf's name), on every engine.
% Only a PostScript extension is rewritten: xetex.def reads the file again after the rule ran.
\edef\quire@eps{\detokenize{.eps}}\edef\quire@EPS{\detokenize{.EPS}}\edef\quire@ps{\detokenize{.ps}}\edef\quire@PS{\detokenize{.PS}}
\def\quire@toconverted{\edef\Gin@ext{-\expandafter\@gobble\quire@ext-converted-to.pdf}}
\def\quire@epsext{\edef\quire@ext{\detokenize\expandafter{\Gin@ext}}%
  \ifx\quire@ext\quire@eps\quire@toconverted\fi\ifx\quire@ext\quire@EPS\quire@toconverted\fi
  \ifx\quire@ext\quire@ps\quire@toconverted\fi\ifx\quire@ext\quire@PS\quire@toconverted\fi}
\def\Gread@quireeps#1{\quire@epsext\Gread@pdf{\Gin@base\Gin@ext}}
\def\Ginclude@quireeps#1{\quire@epsext\Ginclude@pdf{\Gin@base\Gin@ext}}
\def\quire@epsrule#1{{quireeps}{\Gin@ext}{#1}}
\AddToHook{package/graphics/after}{%
  \expandafter\let\csname Gin@rule@.svg\endcsname\quire@svgrule
  \expandafter\let\csname Gin@rule@.SVG\endcsname\quire@svgrule
  \expandafter\let\csname Gin@rule@.eps\endcsname\quire@epsrule
  \expandafter\let\csname Gin@rule@.EPS\endcsname\quire@epsrule
  \expandafter\let\csname Gin@rule@.ps\endcsname\quire@epsrule
  \expandafter\let\csname Gin@rule@.PS\endcsname\quire@epsrule
  \g@addto@macro\Gin@extensions{,.svg,.SVG,.eps,.EPS,.ps}}
`;

// The driver selection of TeX Live's graphics.cfg (CC0), used when the system copy is not found.
const DEFAULT_DRIVER_SELECTION = String.raw`\begingroup
  \chardef\x=0\relax
  \ifx\luatexversion\@undefined
  \@ifundefined{pdfoutput}{}{\ifnum\pdfoutput<1 \else\chardef\x=1\relax\fi}%
  \@ifundefined{XeTeXversion}{}{\chardef\x=3\relax}%
  \else
    \ifnum\luatexversion>85 \ifnum\outputmode>0 \chardef\x=4\relax\fi
    \else\ifnum\pdfoutput>0 \chardef\x=1\relax\fi\fi
  \fi
\expandafter\endgroup
\ifcase\x \def\Gin@driver{dvips.def}\ExecuteOptions{dvips}%
\or \def\Gin@driver{pdftex.def}\ExecuteOptions{pdftex}%
\or \def\Gin@driver{vtex.def}\ExecuteOptions{vtex}%
\or \def\Gin@driver{xetex.def}\ExecuteOptions{xetex}%
\or \def\Gin@driver{luatex.def}\ExecuteOptions{luatex}%
\fi
\endinput
`;

let graphicsConfig: Promise<string> | null = null;

async function systemGraphicsConfig(): Promise<string> {
  try {
    const image = defaultImageRoot();
    const path = (await imageTool(['kpsewhich', 'graphics.cfg'], image)).trim();
    if (path) return await readFile(hostPath(path, image), 'utf8');
  } catch {
    // fall through to the built-in copy
  }
  return DEFAULT_DRIVER_SELECTION;
}

/** The graphics.cfg a job with SVG assets gets. */
export function svgGraphicsConfig(): Promise<string> {
  graphicsConfig ??= systemGraphicsConfig().then((system) => SVG_RULE + system);
  return graphicsConfig;
}
