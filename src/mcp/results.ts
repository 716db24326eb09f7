// Tool results: the HTTP body in structuredContent, and a text the agent can act on.
// A failure is a result with isError (MCP), never a JSON-RPC error, so the agent can fix and retry.
import { adviceFor } from '../errors.js';
import type { Body } from './tool.js';

/** MCP content blocks this server sends: text, and files (images inline, others as embedded resources). */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'resource'; resource: { uri: string; mimeType: string; blob: string } };

export interface ToolResult {
  [key: string]: unknown;
  content: ContentBlock[];
  structuredContent: Body;
  isError?: true;
}

export function success(body: Body, text: string, attachments: ContentBlock[] = []): ToolResult {
  return { content: [{ type: 'text', text }, ...attachments], structuredContent: body };
}

export function failure(body: Body, status?: number): ToolResult {
  return { content: [{ type: 'text', text: failureText(body, status) }], structuredContent: body, isError: true };
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function record(value: unknown): Body | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Body) : undefined;
}

/** What the agent should do next: the catalogue's advice for the code, else "retry" for a transient error. */
function advice(body: Body, status?: number): string | undefined {
  const specific = adviceFor(String(body.error));
  if (specific !== undefined) return specific;
  if (body.retryable === true || (status !== undefined && status >= 500)) return 'This is transient: retry the same call later.';
  return undefined;
}

/** A plain-text account of an error body: what failed, where, and how to fix it. */
export function failureText(body: Body, status?: number): string {
  const lines = [`Error ${String(body.error)}: ${str(body.message) ?? 'the call failed.'}`];
  const diagnosis = record(body.diagnosis);
  if (diagnosis) {
    const where = num(diagnosis.line) ?? num(body.line);
    lines.push(
      `Diagnosis (${String(diagnosis.error_class)}${where !== undefined ? `, line ${where}` : ''}): ${str(diagnosis.summary) ?? ''}`.trim(),
    );
    if (str(diagnosis.suggested_fix)) lines.push(`Suggested fix: ${String(diagnosis.suggested_fix)}`);
    if (str(diagnosis.suggested_package)) lines.push(`Package: \\usepackage{${String(diagnosis.suggested_package)}}`);
  } else if (num(body.line) !== undefined) {
    lines.push(`Line: ${String(body.line)}`);
  }
  if (str(body.agent_hint)) lines.push(`Hint: ${String(body.agent_hint)}`);
  for (const field of list(body.fields)) {
    const f = record(field);
    if (f) lines.push(`- ${String(f.field)}: ${String(f.message ?? f.rule)}${f.limit !== undefined ? ` (limit ${String(f.limit)})` : ''}`);
  }
  const missing = list(body.missing_fields);
  if (missing.length > 0) lines.push(`Missing fields: ${missing.map(String).join(', ')}`);
  for (const typeError of list(body.type_errors)) {
    const t = record(typeError);
    if (t) lines.push(`- ${String(t.field)}: expected ${String(t.expected)}${t.got !== undefined ? `, got ${String(t.got)}` : ''}`);
  }
  const colors = list(body.colors);
  if (colors.length > 0) lines.push(`Valid colors: ${colors.map(String).join(', ')}`);
  if (num(body.limit) !== undefined) lines.push(`Limit: ${String(body.limit)}${str(body.plan) ? ` on plan ${String(body.plan)}` : ''}`);
  if (str(body.resets_at)) lines.push(`Resets at: ${String(body.resets_at)}`);
  if (num(body.retry_after_seconds) !== undefined) lines.push(`Retry after ${String(body.retry_after_seconds)} s.`);
  const next = record(body.next_step);
  if (next) {
    const how = [str(next.signup_url) && `sign up at ${String(next.signup_url)}`, str(next.header) && `send it as ${String(next.header)}`]
      .filter(Boolean)
      .join(', ');
    lines.push(`Next step: ${String(next.action)}${how ? ` (${how})` : ''}${list(next.remove_fields).length ? `; or remove ${list(next.remove_fields).join(', ')}` : ''}.`);
  }
  if (str(body.upgrade_url)) lines.push(`Upgrade: ${String(body.upgrade_url)}`);
  const what = advice(body, status);
  if (what) lines.push(what);
  return lines.join('\n');
}

/** The text of a compile or render success: the link, the pages, and anything to relay. */
export function pdfText(body: Body): string {
  const pages = num(body.pages);
  const lines = [`PDF ready: ${String(body.pdf_url)}`];
  lines.push(
    `Pages: ${pages ?? '?'}${body.preview === true ? ` of ${String(body.total_pages ?? '?')} (preview)` : ''}; the link works without credentials until ${String(body.expires_at)}.`,
  );
  if (str(body.warning)) lines.push(`Warning, relay it to the user: ${String(body.warning)}`);
  const warnings = list(body.warnings).map(record).filter((w) => w !== undefined);
  if (warnings.length > 0) {
    lines.push(`The document compiled with ${warnings.length} problem(s) you can fix:`);
    for (const w of warnings.slice(0, 10)) {
      lines.push(`- ${String(w.message)}${num(w.line) !== undefined ? ` (line ${String(w.line)})` : ''} Fix: ${String(w.fix)}`);
    }
  }
  // on_error "continue": the PDF exists despite these, so the agent hears of them beside the link.
  const texErrors = list(body.errors).map(record).filter((e) => e !== undefined);
  if (texErrors.length > 0) {
    lines.push(`TeX went on past ${texErrors.length} error(s); the PDF may be wrong where they are:`);
    for (const e of texErrors.slice(0, 10)) {
      const where = [str(e.file), num(e.line)].filter((part) => part !== undefined).join(':');
      lines.push(`- ${String(e.message)}${where ? ` (${where})` : ''}`);
    }
  }
  if (body.anonymous === true) {
    if (num(body.remaining_today) !== undefined) lines.push(`Anonymous compiles left today: ${String(body.remaining_today)}.`);
    if (str(body.note)) lines.push(String(body.note));
  }
  if (str(body.studio_url)) lines.push(`Edit in the browser: ${String(body.studio_url)}`);
  return lines.join('\n');
}
