// The studio: edit LaTeX, compile, see the PDF, and fix what the diagnosis points at.
// The editor (CodeMirror) and the PDF renderer (pdf.js) are separate chunks loaded lazily;
// until the editor arrives the page's plain textarea works.
import { api, ApiError, forgetKey, storedKey, type Json, type Usage } from './lib/api';
import { mountAccount } from './lib/account';
import { $, h } from './lib/dom';
import { buildFragment, parseFragment } from './lib/fragment';
import { OutputProblem } from './lib/output-options';
import { mountOutputPanel } from './lib/output-panel';
import { problemNodes } from './lib/problems';
import type { LatexEditor } from './editor';

const DRAFT = 'quire.draft';
const body = document.body;
const compileButton = $<HTMLButtonElement>('#compile');
const compilerSelect = $<HTMLSelectElement>('#compiler');
const status = $('#status');
const quota = $('#quota');
const diagnosis = $('#diagnosis');
const problemsBox = $('#problems');
const pdfBox = $('#pdf');
const openPdf = $<HTMLAnchorElement>('#open-pdf');
const saveButton = $<HTMLButtonElement>('#save-template');
const banner = $('#template-banner');
const textarea = $<HTMLTextAreaElement>('#source');

let editor: LatexEditor | null = null;
let usage: Usage | null = null;
let anonRemaining = Number(body.dataset.anonRemaining);
const anonLimit = Number(body.dataset.anonLimit);
let template: { id: number; name: string } | null = null;
let storedAssets: string[] = [];
let compiling = false;

const source = () => (editor ? editor.getValue() : textarea.value);

function setStatus(text: string, tone: 'info' | 'ok' | 'error' = 'info'): void {
  status.textContent = text;
  status.dataset.tone = tone;
}

// ---- Source: from the link, a template, or the last draft -------------------------------

let fragment: ReturnType<typeof parseFragment> = {};
try {
  fragment = parseFragment(location.hash);
} catch {
  setStatus('This studio link is damaged: its source could not be decoded.', 'error');
}
if (fragment.source !== undefined) textarea.value = fragment.source;
else if (!fragment.template) textarea.value = localStorage.getItem(DRAFT) ?? textarea.value;
if (fragment.compiler && [...compilerSelect.options].some((o) => o.value === fragment.compiler)) {
  compilerSelect.value = fragment.compiler;
}
const outputPanel = mountOutputPanel();
if (fragment.output) outputPanel.restore(fragment.output);

let draftTimer: number | undefined;
function sourceChanged(): void {
  window.clearTimeout(draftTimer);
  draftTimer = window.setTimeout(() => {
    if (!template) localStorage.setItem(DRAFT, source());
  }, 500);
}
textarea.addEventListener('input', sourceChanged);

void import('./editor').then(({ createEditor }) => {
  const host = $('#editor');
  const text = textarea.value;
  const hadFocus = document.activeElement === textarea;
  host.replaceChildren();
  editor = createEditor(host, text, { onRun: () => void compile(), onChange: sourceChanged, label: 'LaTeX source' });
  if (hadFocus) editor.view.focus();
  if (pendingMark) editor.markError(pendingMark.line, pendingMark.message);
});
// Fetch pdf.js while the user reads or types, so the first compile shows its PDF sooner.
const idle = window.requestIdleCallback ?? ((run: () => void) => window.setTimeout(run, 1500));
idle(() => void import('./pdf-view'));
let pendingMark: { line: number; message: string } | null = null;

// ---- Account and quota -------------------------------------------------------------------

const account = mountAccount((next) => applyUsage(next));

function applyUsage(next: Usage | null): void {
  usage = next;
  const allowed = next ? next.limits.allowed_compilers : ['pdflatex'];
  for (const option of compilerSelect.options) {
    const ok = allowed.includes(option.value);
    option.disabled = !ok;
    option.textContent = ok ? option.value : `${option.value} (${next ? 'needs a bigger plan' : 'needs a key'})`;
  }
  if (!allowed.includes(compilerSelect.value)) compilerSelect.value = 'pdflatex';
  saveButton.hidden = !next || next.templates.limit === 0;
  storedAssets = [];
  void refreshAssets();
  void refreshIdentities();
  renderQuota();
}

/** The signing identities the Output panel offers (paid plans, like saved templates). */
async function refreshIdentities(): Promise<void> {
  if (!usage || usage.templates.limit === 0) {
    outputPanel.setIdentities(null);
    return;
  }
  try {
    const res = await api<{ identities: Array<{ name: string }> }>('/api/v1/signing-identities');
    outputPanel.setIdentities(res.identities.map((i) => i.name));
  } catch {
    outputPanel.setIdentities(null);
  }
}

/** The library's names, re-read before each compile so uploads from the dashboard count at once. */
async function refreshAssets(): Promise<void> {
  if (!usage || usage.limits.max_stored_assets_count === 0) return;
  try {
    const res = await api<{ assets: Array<{ name: string }> }>('/api/v1/assets');
    storedAssets = res.assets.map((a) => a.name);
  } catch {
    // Keep the last list: the compile itself reports a missing asset clearly.
  }
}

function renderQuota(): void {
  quota.replaceChildren();
  if (usage) {
    const u = usage.usage;
    quota.append(`${capitalize(usage.user.plan)} plan: ${u.used_this_month.toLocaleString()} of ${u.monthly_limit.toLocaleString()} compiles used this month`);
  } else {
    quota.append(`Anonymous: ${anonRemaining} of ${anonLimit} compiles left today · `, h('a', { href: '/signup' }, 'get a free key'));
  }
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

async function loadAccount(): Promise<void> {
  if (!storedKey()) {
    account.render(null);
    applyUsage(null);
    return;
  }
  try {
    const next = await api<Usage>('/api/v1/usage');
    account.render(next);
    applyUsage(next);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      forgetKey();
      setStatus('The key saved in this browser no longer works (it was rotated or revoked). Compiling anonymously.', 'error');
    }
    account.render(null);
    applyUsage(null);
  }
}

// ---- Templates ---------------------------------------------------------------------------

async function loadTemplate(id: string): Promise<void> {
  if (!storedKey()) {
    setStatus('Opening a template needs your API key.', 'error');
    account.openDialog();
    return;
  }
  try {
    const res = await api<{ template: { id: number; name: string; latex_content: string } }>(`/api/v1/templates/${encodeURIComponent(id)}`);
    template = { id: res.template.id, name: res.template.name };
    if (editor) editor.setValue(res.template.latex_content);
    else textarea.value = res.template.latex_content;
    showBanner();
  } catch (err) {
    setStatus(`Could not open template ${id}: ${(err as Error).message}`, 'error');
  }
}

function showBanner(): void {
  banner.hidden = !template;
  if (template) banner.replaceChildren('Editing template ', h('strong', {}, template.name), '. “Save template” writes your changes back.');
}

const saveDialog = $<HTMLDialogElement>('#save-dialog');
const saveForm = $<HTMLFormElement>('#save-form');
const nameInput = $<HTMLInputElement>('#template-name');
const saveError = $('#save-error');
saveButton.addEventListener('click', () => {
  nameInput.value = template?.name ?? '';
  saveError.textContent = '';
  saveDialog.showModal();
  nameInput.focus();
});
$('[data-close]', saveDialog).addEventListener('click', () => saveDialog.close());
saveForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const name = nameInput.value.trim();
  if (!name) {
    saveError.textContent = 'Give the template a name.';
    return;
  }
  try {
    const res = await api<{ template: { id: number; name: string }; created: boolean }>('/api/v1/templates', {
      body: { name, latex_content: source() },
    });
    template = { id: res.template.id, name: res.template.name };
    saveDialog.close();
    showBanner();
    history.replaceState(null, '', `#${buildFragment({ template: String(template.id) })}`);
    setStatus(res.created ? `Saved new template “${template.name}”.` : `Saved template “${template.name}”.`, 'ok');
  } catch (err) {
    saveError.textContent = (err as Error).message;
  }
});

// ---- Compile -----------------------------------------------------------------------------

/** Stored assets the source mentions by name, so `\includegraphics{logo.png}` just works. */
function referencedAssets(text: string): string[] {
  const lower = text.toLowerCase();
  return storedAssets.filter((name) => lower.includes(name.toLowerCase()));
}

async function compile(): Promise<void> {
  if (compiling) return;
  let output: Json | undefined;
  try {
    output = outputPanel.request();
  } catch (err) {
    if (!(err instanceof OutputProblem)) throw err;
    setStatus(err.message, 'error');
    return;
  }
  const password = outputPanel.userPassword();
  const shared = outputPanel.shareable();
  outputPanel.close();
  compiling = true;
  compileButton.disabled = true;
  pdfBox.setAttribute('aria-busy', 'true');
  setStatus('Compiling…');
  await refreshAssets();
  const latex = source();
  const compiler = compilerSelect.value;
  const request: Json = { latex, compiler };
  // The TeX Live picker is there when the server serves more than one year.
  const texlive = document.querySelector<HTMLSelectElement>('#texlive')?.value;
  if (texlive) request.texlive = texlive;
  const assets = referencedAssets(latex);
  if (assets.length > 0) request.use_stored_assets = assets;
  if (output) request.output = output;
  if (outputPanel.onError() === 'continue') request.on_error = 'continue';
  try {
    const res = await api<Json>('/api/v1/compile', { body: request });
    clearDiagnosis();
    if (!template) history.replaceState(null, '', `#${buildFragment({ source: latex, compiler, output: shared })}`);
    await showPdf(res, password, output);
  } catch (err) {
    if (err instanceof ApiError) showFailure(err);
    else setStatus(`The PDF could not be shown: ${(err as Error).message}`, 'error');
  } finally {
    compiling = false;
    compileButton.disabled = false;
    pdfBox.setAttribute('aria-busy', 'false');
  }
}

/** The server's PNG of page 1 (output.page_images), kept to re-add after pdf.js redraws. */
let pageImage: HTMLElement | null = null;

async function showPdf(res: Json, password: string, output: Json | undefined): Promise<void> {
  const pages = Number(res.pages);
  const ms = Number(res.compilation_time_ms);
  if (typeof res.remaining_today === 'number') anonRemaining = res.remaining_today;
  const u = res.usage as Json | undefined;
  if (usage && u && typeof u.used_this_month === 'number') usage.usage.used_this_month = u.used_this_month;
  renderQuota();
  const url = String(res.pdf_url);
  openPdf.href = url;
  openPdf.hidden = false;
  const { renderPdf } = await import('./pdf-view');
  await renderPdf(pdfBox, sameOrigin(url), body.dataset.pdfWorker ?? '', password);
  pageImage = pageImageFigure(res.page_images);
  if (pageImage) pdfBox.append(pageImage);
  markStale(false);
  const time = Number.isFinite(ms) ? ` in ${(ms / 1000).toFixed(1)} s` : '';
  const checked = checkedNote(res, output);
  const warning = typeof res.warning === 'string' ? ` ${res.warning}` : '';
  const errors = Array.isArray(res.errors) ? res.errors.length : 0;
  const despite = errors > 0 ? ` despite ${errors} TeX ${errors === 1 ? 'error' : 'errors'}` : '';
  showProblems(res);
  setStatus(`Compiled ${pages} ${pages === 1 ? 'page' : 'pages'}${time}${despite}.${checked}${warning}`, warning || despite ? 'error' : 'ok');
}

/** A success's TeX errors (on_error "continue") and warnings, under the source; hidden when none. */
function showProblems(res: Json): void {
  const nodes = problemNodes(res, (line) => editor?.goToLine(line));
  problemsBox.replaceChildren(...nodes);
  problemsBox.hidden = nodes.length === 0;
}

const standardName = (level: string) => (level.startsWith('ua-') ? `PDF/UA-${level.slice(3)}` : `PDF/A-${level.slice(2)}`);

/**
 * What the status line says of the output checks: a PDF/A level was met (a failure is a 422),
 * and for tagging the report's result: its checks are necessary conditions, never a verdict
 * of conformance, and a failed one does not stop delivery.
 */
function checkedNote(res: Json, output: Json | undefined): string {
  const standard = typeof output?.pdf_standard === 'string' ? output.pdf_standard : null;
  const signed = output?.sign ? ' Signed.' : '';
  const report = res.conformance as { checks?: unknown[]; violations?: string[] } | undefined;
  const tagging = output?.tagged === true || Boolean(standard?.startsWith('ua-'));
  if (!tagging || !report || !Array.isArray(report.violations)) return `${standard ? ` Meets ${standardName(standard)}.` : ''}${signed}`;
  const what = standard ? standardName(standard) : 'Tagging';
  const failed = report.violations.map((v) => v.split(':')[0]);
  const total = Array.isArray(report.checks) ? report.checks.length : 0;
  const verdict = failed.length === 0 ? ` ${what}: all ${total} checks passed.` : ` ${what}: ${failed.length} of ${total} checks failed (${failed.join(', ')}).`;
  return `${verdict}${signed}`;
}

/** The first page image of a success body, under the PDF view; null when none was asked for. */
function pageImageFigure(images: unknown): HTMLElement | null {
  const first = Array.isArray(images) ? (images[0] as { page?: unknown; url?: unknown; width?: unknown; height?: unknown } | undefined) : undefined;
  if (!first || typeof first.url !== 'string') return null;
  const src = sameOrigin(first.url);
  const size = typeof first.width === 'number' && typeof first.height === 'number' ? `, ${first.width} × ${first.height} px` : '';
  const page = typeof first.page === 'number' ? first.page : 1;
  return h(
    'figure',
    { class: 'page-image', id: 'page-image' },
    h('img', { src, alt: `Page ${page} as a PNG rendered by the server`, ...(size ? { width: Number(first.width), height: Number(first.height) } : {}) }),
    h('figcaption', {}, `Page ${page} image from the server (PNG${size}) · `, h('a', { href: src, target: '_blank', rel: 'noopener' }, 'Open image')),
  );
}

/**
 * pdf_url is built from QUIRE_BASE_URL; when the studio is reached under another name (a
 * proxy, 127.0.0.1 for localhost) fetch the same signed path from this origin instead.
 */
function sameOrigin(url: string): string {
  const parsed = new URL(url, location.href);
  return parsed.pathname.startsWith('/api/v1/pdfs/') ? `${location.origin}${parsed.pathname}${parsed.search}` : url;
}

const TITLES: Record<string, string> = {
  missing_package: 'Missing package',
  missing_document_class: 'Unknown document class',
  missing_asset: 'Missing file',
  undefined_command: 'Undefined command',
  undefined_environment: 'Undefined environment',
  mismatched_environment: 'Mismatched environment',
  missing_math_mode: 'Math outside math mode',
  missing_begin_document: 'Missing \\begin{document}',
  unsupported_unicode: 'Unsupported character',
  unbalanced_braces: 'Unbalanced braces',
  runaway_argument: 'Runaway argument',
  fatal_error: 'Fatal error',
};

interface Diagnosis {
  error_class: string;
  summary: string;
  suggested_fix: string;
  suggested_package?: string;
  symbol?: string;
  line?: number;
}

/** Marks the PDF on screen as older than the source after a failed compile. */
function markStale(stale: boolean): void {
  pdfBox.querySelector('.stale-note')?.remove();
  if (stale && pdfBox.querySelector('.pdf-page')) {
    pdfBox.dataset.stale = '';
    pdfBox.prepend(h('p', { class: 'stale-note' }, 'This is the last PDF that compiled; the current source did not.'));
  } else {
    delete pdfBox.dataset.stale;
  }
}

function clearDiagnosis(): void {
  diagnosis.hidden = true;
  diagnosis.replaceChildren();
  problemsBox.hidden = true;
  problemsBox.replaceChildren();
  pendingMark = null;
  editor?.clearError();
}

function showFailure(err: ApiError): void {
  clearDiagnosis();
  const b = err.body;
  const diag = (b.diagnosis ?? null) as Diagnosis | null;
  const line = typeof diag?.line === 'number' ? diag.line : typeof b.line === 'number' ? b.line : null;
  const parts: Node[] = [];
  const title = diag ? (TITLES[diag.error_class] ?? 'Compilation failed') : (FAILURE_TITLES[err.code]?.(b) ?? 'Not compiled');
  parts.push(h('h3', { id: 'diagnosis-title' }, line ? `${title} on line ${line}` : title));
  const findings = failureList(b);
  parts.push(h('p', { class: 'diag-summary' }, diag?.summary ?? findings?.lead ?? err.message));
  if (findings) parts.push(h('ul', { class: 'diag-reasons' }, ...findings.items.map((item) => h('li', {}, item))));
  const fix = diag?.suggested_fix ?? (err.code === 'pdf_standard_failed' && typeof b.agent_hint === 'string' ? b.agent_hint : undefined);
  if (fix) parts.push(h('p', { class: 'diag-fix' }, h('strong', {}, 'Fix: '), fix));
  const actions = h('div', { class: 'actions' });
  if (diag?.suggested_package) {
    const pkgLine = usepackageLine(diag.suggested_package, diag.suggested_fix);
    actions.append(h('button', { type: 'button', class: 'button primary', id: 'apply-fix', onclick: () => addPackage(pkgLine) }, `Add ${pkgLine}`));
  }
  if (line) actions.append(h('button', { type: 'button', class: 'button', onclick: () => editor?.goToLine(line) }, `Go to line ${line}`));
  const next = b.next_step as Json | undefined;
  if (next && typeof next.signup_url === 'string') actions.append(h('a', { class: 'button primary', href: next.signup_url }, 'Get an API key'));
  if (actions.childElementCount > 0) parts.push(actions);
  if (typeof b.log === 'string' && b.log) {
    parts.push(h('details', {}, h('summary', {}, 'Compiler log'), h('pre', { class: 'log' }, b.log.split('\n').slice(-60).join('\n'))));
  }
  diagnosis.replaceChildren(...parts);
  diagnosis.hidden = false;
  markStale(true);
  diagnosis.dataset.code = err.code;
  if (line) {
    const message = diag ? `${diag.summary}\n${diag.suggested_fix}` : err.message;
    if (editor) editor.markError(line, message);
    else pendingMark = { line, message };
  }
  if (typeof b.remaining_today === 'number') anonRemaining = b.remaining_today;
  if (err.code === 'anonymous_quota_exhausted') anonRemaining = 0;
  renderQuota();
  setStatus(line ? `${title} on line ${line}.` : err.message, 'error');
}

/** Titles of failures that come without a diagnosis. */
const FAILURE_TITLES: Record<string, (b: Json) => string> = {
  compilation_failed: () => 'Compilation failed',
  pdf_standard_failed: (b) => `Not ${typeof b.pdf_standard === 'string' ? standardName(b.pdf_standard) : 'PDF/A'}`,
  output_failed: () => 'Output step failed',
};

/** A failure's own list: the validator's reasons (output steps) or the refused fields. */
function failureList(b: Json): { lead: string; items: string[] } | null {
  const reasons = Array.isArray(b.reasons) ? b.reasons.filter((r): r is string => typeof r === 'string') : [];
  if (reasons.length > 0) {
    const lead = b.error === 'pdf_standard_failed' ? 'The PDF compiled, but the check found:' : 'The output step reported:';
    return { lead, items: reasons };
  }
  const fields = Array.isArray(b.fields) ? (b.fields as Array<{ field?: unknown; message?: unknown }>) : [];
  const items = fields.filter((f) => typeof f.field === 'string').map((f) => `${String(f.field)}: ${String(f.message ?? '')}`);
  return items.length > 0 ? { lead: 'The request was refused:', items } : null;
}

/** The \usepackage line to add: the fix's own (it may carry options, e.g. [table]) or a plain one. */
function usepackageLine(pkg: string, fix: string): string {
  for (const match of fix.matchAll(/\\usepackage(\[[^\]]*\])?\{([^}]*)\}/g)) {
    if (match[2]!.split(',').map((p) => p.trim()).includes(pkg)) return match[0];
  }
  return `\\usepackage{${pkg}}`;
}

function addPackage(text: string): void {
  const lines = source().split('\n');
  const begin = lines.findIndex((l) => /^\s*\\begin\{document\}/.test(l));
  const end = begin === -1 ? lines.length : begin;
  let at = -1;
  for (let i = 0; i < end; i++) if (/^\s*\\(usepackage|documentclass)\b/.test(lines[i]!)) at = i;
  const lineNumber = at >= 0 ? at + 2 : begin >= 0 ? begin + 1 : 1;
  if (editor) editor.insertLine(lineNumber, text);
  else {
    lines.splice(lineNumber - 1, 0, text);
    textarea.value = lines.join('\n');
  }
  clearDiagnosis();
  setStatus(`Added ${text} on line ${lineNumber}. Compile again with Ctrl+Enter.`, 'ok');
  compileButton.focus();
}

compileButton.addEventListener('click', () => void compile());
document.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !event.defaultPrevented) {
    event.preventDefault();
    void compile();
  }
});
if (/Mac|iPhone|iPad/.test(navigator.platform)) $('.shortcut').textContent = '⌘+Enter';

$('#copy-link').addEventListener('click', async () => {
  const link = `${location.origin}/studio#${buildFragment({ source: source(), compiler: compilerSelect.value, output: outputPanel.shareable() })}`;
  try {
    await navigator.clipboard.writeText(link);
    setStatus('Link copied. The source travels inside the link; the server never stores it.', 'ok');
  } catch {
    history.replaceState(null, '', link);
    setStatus('Copy the link from the address bar: it holds the source.', 'ok');
  }
});

let resizeTimer: number | undefined;
window.addEventListener('resize', () => {
  window.clearTimeout(resizeTimer);
  resizeTimer = window.setTimeout(() => {
    if (openPdf.hidden) return;
    void import('./pdf-view')
      .then((m) => m.redraw(pdfBox))
      .then(() => {
        if (pageImage) pdfBox.append(pageImage);
      });
  }, 200);
});

void loadAccount().then(() => (fragment.template ? loadTemplate(fragment.template) : undefined));
