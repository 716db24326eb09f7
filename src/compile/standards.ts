// Which standards a request's `output.pdf_standard` and `output.tagged` ask for (issue 40,
// docs/pdf-output.md): one PDF/A level and one PDF/UA part at most, in combinations the
// standards allow (PDF/UA-1 is PDF 1.7 and goes with PDF/A-2 or -3; PDF/UA-2 is PDF 2.0 and goes
// with PDF/A-4), the language UA requires, and an engine that can tag. Runs before the quota is
// reserved: a refusal costs nothing.
import { errors } from '../errors.js';
import type { Compiler } from '../tex/compilers.js';
import type { OutputTagging, PdfStandard, UaStandard } from '../tex/output/spec.js';
import { hasDocumentMetadata, TAGGING_ENGINES } from '../tex/output/tagging.js';
import type { OutputRequest } from './output-schema.js';

export interface Standards {
  pdfStandard?: PdfStandard;
  tagging?: OutputTagging;
}

/** PDF/A levels each UA part can be combined with (the PDF version both need). */
const COMPATIBLE: Record<UaStandard, { pdfa: PdfStandard[]; version: '1.7' | '2.0' }> = {
  'ua-1': { pdfa: ['a-2b', 'a-2u', 'a-3b', 'a-3u'], version: '1.7' },
  'ua-2': { pdfa: ['a-4', 'a-4f'], version: '2.0' },
};

/**
 * The standards of `request`, or the field errors pushed to `field`. Throws
 * tagging_unsupported_engine for xelatex with tagging (its own catalogue code: the fix is the engine).
 */
export function parseStandards(request: OutputRequest, compiler: Compiler, latex: string, field: (name: string, rule: string, message: string) => void): Standards {
  const asked = request.pdf_standard === undefined ? [] : Array.isArray(request.pdf_standard) ? request.pdf_standard : [request.pdf_standard];
  const pdfas = asked.filter((s): s is PdfStandard => s.startsWith('a-'));
  const uas = asked.filter((s): s is UaStandard => s.startsWith('ua-'));
  const name = 'output.pdf_standard';
  if (pdfas.length > 1 || uas.length > 1) {
    field(name, 'combination', 'names at most one PDF/A level and one PDF/UA part, e.g. ["a-2b","ua-1"]');
    return {};
  }
  const [pdfa, ua] = [pdfas[0], uas[0]];
  const tagged = ua !== undefined || request.tagged === true;
  if (ua && request.tagged === false) field('output.tagged', 'conflict', `cannot be false with ${ua}: PDF/UA is a tagged PDF`);
  if (ua && pdfa && !COMPATIBLE[ua].pdfa.includes(pdfa)) {
    field(name, 'combination', `${ua} (PDF ${COMPATIBLE[ua].version}) goes with ${COMPATIBLE[ua].pdfa.join(', ')}, not ${pdfa}`);
  }
  if (pdfa === 'a-1b' && tagged) field(name, 'combination', 'a-1b (PDF 1.4) cannot be tagged by the LaTeX kernel: use a-2b with ua-1 or tagged');
  if ((pdfa === 'a-4' || pdfa === 'a-4f') && !tagged) field(name, 'combination', `${pdfa} is written by the LaTeX kernel with tagging: combine it with ua-2 or tagged: true`);
  if (ua && !request.metadata?.lang) field('output.metadata.lang', 'required', `${ua} requires the document language (BCP 47, e.g. en-GB)`);
  if (tagged && hasDocumentMetadata(latex)) {
    field(request.tagged ? 'output.tagged' : name, 'document_metadata', 'the document has its own \\DocumentMetadata: remove it (the service writes it from output) or leave out tagging and PDF/UA');
  }
  if (tagged && !TAGGING_ENGINES.includes(compiler)) {
    throw errors.tagging_unsupported_engine(
      `${compiler} cannot write a tagged, accessible PDF (XeTeX writes no marked content for the structure tree); compile with lualatex or pdflatex.`,
      { compiler, engines: [...TAGGING_ENGINES], field: ua ? name : 'output.tagged' },
    );
  }
  if (!tagged) return pdfa ? { pdfStandard: pdfa } : {};
  const version = ua ? COMPATIBLE[ua].version : pdfa?.startsWith('a-4') ? '2.0' : pdfa ? '1.7' : undefined;
  const tagging: OutputTagging = {
    ...(ua ? { ua } : {}),
    ...(request.metadata?.lang ? { lang: request.metadata.lang } : {}),
    ...(version ? { pdfVersion: version } : {}),
  };
  return { ...(pdfa ? { pdfStandard: pdfa } : {}), tagging };
}
