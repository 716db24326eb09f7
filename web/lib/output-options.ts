// The studio's Output panel as data: what its controls hold, the `output` object a compile
// sends (only the options set, never an empty object), and the part a studio link may carry.
// Encryption never goes into a link or the browser's storage: passwords live only in the
// form and in the compile request. A signature (issue 40) names a stored identity of the
// account; it stays out of links too, since whoever opens one cannot sign with it.
import type { Json } from './api';

export const PERMISSIONS = ['print', 'modify', 'copy', 'annotate', 'fill_forms', 'accessibility'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** The controls' values as typed (numbers stay strings until they are sent). */
export interface OutputSettings {
  standard: string;
  title: string;
  author: string;
  subject: string;
  keywords: string;
  lang: string;
  userPassword: string;
  ownerPassword: string;
  permissions: Record<Permission, boolean>;
  watermark: string;
  opacity: string;
  angle: string;
  pageImage: boolean;
  dpi: string;
  linearize: boolean;
  compress: boolean;
  /** A stored signing identity's name ('' for no signature), with the signature's fields. */
  signIdentity: string;
  signReason: string;
  signLocation: string;
  signTimestamp: boolean;
}

export const DEFAULT_SETTINGS: OutputSettings = {
  standard: '',
  title: '',
  author: '',
  subject: '',
  keywords: '',
  lang: '',
  userPassword: '',
  ownerPassword: '',
  permissions: { print: true, modify: true, copy: true, annotate: true, fill_forms: true, accessibility: true },
  watermark: '',
  opacity: '0.2',
  angle: '45',
  pageImage: false,
  dpi: '72',
  linearize: false,
  compress: false,
  signIdentity: '',
  signReason: '',
  signLocation: '',
  signTimestamp: false,
};

/** The panel's "Tagged PDF" choice: `output.tagged` without a PDF/UA claim. */
export const TAGGED_ONLY = 'tagged';

/** True when the standard chosen is PDF/A or PDF/UA, which the API refuses with encryption or a watermark. */
export const locksProtection = (standard: string): boolean => standard !== '' && standard !== TAGGED_ONLY;

/** A setting the API would refuse for a reason the studio can name before sending. */
export class OutputProblem extends Error {
  constructor(
    readonly setting: keyof OutputSettings,
    message: string,
  ) {
    super(message);
  }
}

const number = (text: string): number | undefined => (text.trim() === '' || !Number.isFinite(Number(text)) ? undefined : Number(text));

/** The compile's `output`, or undefined when nothing is set. Throws OutputProblem. */
export function buildOutput(s: OutputSettings): Json | undefined {
  const out: Json = {};
  if (s.standard === TAGGED_ONLY) out.tagged = true;
  else if (s.standard) out.pdf_standard = s.standard;
  const locked = locksProtection(s.standard);
  const metadata: Json = {};
  for (const key of ['title', 'author', 'subject', 'lang'] as const) if (s[key].trim()) metadata[key] = s[key].trim();
  const keywords = s.keywords.split(',').map((k) => k.trim()).filter(Boolean);
  if (keywords.length > 0) metadata.keywords = keywords;
  if (Object.keys(metadata).length > 0) out.metadata = metadata;
  // PDF/A forbids encryption and cannot check a watermark: the panel disables both meanwhile.
  if (!locked && (s.userPassword || s.ownerPassword)) {
    if (!s.ownerPassword) throw new OutputProblem('ownerPassword', 'Encryption needs an owner password as well (it lifts the restrictions).');
    const denied = PERMISSIONS.filter((p) => !s.permissions[p]);
    out.encrypt = {
      ...(s.userPassword ? { user_password: s.userPassword } : {}),
      owner_password: s.ownerPassword,
      ...(denied.length > 0 ? { permissions: Object.fromEntries(denied.map((p) => [p, false])) } : {}),
    };
  }
  if (!locked && s.watermark.trim()) {
    const opacity = number(s.opacity);
    const angle = number(s.angle);
    out.watermark = { text: s.watermark.trim(), ...(opacity === undefined ? {} : { opacity }), ...(angle === undefined ? {} : { angle }) };
  }
  if (s.pageImage) {
    const dpi = number(s.dpi);
    out.page_images = { pages: [1], ...(dpi === undefined ? {} : { dpi: Math.round(dpi) }) };
  }
  if (s.linearize) out.linearize = true;
  if (s.compress) out.compress = true;
  if (s.signIdentity) {
    // The API refuses these pairs (a signature covers fixed byte ranges): say so before sending.
    if (out.encrypt) throw new OutputProblem('signIdentity', 'A signed PDF cannot also be encrypted: clear the passwords or choose "Don\'t sign".');
    if (s.linearize) throw new OutputProblem('signIdentity', 'A signed PDF cannot also be linearized: untick Linearize or choose "Don\'t sign".');
    out.sign = {
      identity: s.signIdentity,
      ...(s.signReason.trim() ? { reason: s.signReason.trim() } : {}),
      ...(s.signLocation.trim() ? { location: s.signLocation.trim() } : {}),
      ...(s.signTimestamp ? { timestamp: true } : {}),
    };
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** What a studio link carries: the output without encryption or a signature. */
export function shareableOutput(s: OutputSettings): Json | undefined {
  return buildOutput({ ...s, userPassword: '', ownerPassword: '', signIdentity: '' });
}

/**
 * Settings from an `output` object of a link, read leniently: unknown or mistyped fields are
 * ignored (the link may be old or hand-made), and encryption or a signature is never taken from a link.
 */
export function settingsFrom(output: unknown): OutputSettings {
  const s: OutputSettings = { ...DEFAULT_SETTINGS, permissions: { ...DEFAULT_SETTINGS.permissions } };
  if (!isObject(output)) return s;
  if (typeof output.pdf_standard === 'string') s.standard = output.pdf_standard;
  else if (output.tagged === true) s.standard = TAGGED_ONLY;
  const meta = isObject(output.metadata) ? output.metadata : {};
  for (const key of ['title', 'author', 'subject', 'lang'] as const) if (typeof meta[key] === 'string') s[key] = meta[key];
  if (Array.isArray(meta.keywords)) s.keywords = meta.keywords.filter((k) => typeof k === 'string').join(', ');
  const mark = isObject(output.watermark) ? output.watermark : {};
  if (typeof mark.text === 'string') s.watermark = mark.text;
  if (typeof mark.opacity === 'number') s.opacity = String(mark.opacity);
  if (typeof mark.angle === 'number') s.angle = String(mark.angle);
  const images = isObject(output.page_images) ? output.page_images : null;
  if (images) {
    s.pageImage = true;
    if (typeof images.dpi === 'number') s.dpi = String(images.dpi);
  }
  s.linearize = output.linearize === true;
  s.compress = output.compress === true;
  return s;
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
