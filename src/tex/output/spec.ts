// What a TeX job's output step does to the PDF TeX wrote (issue 23): the checked, normalised
// form of the request's `output` object. The compile service builds it (compile/output.ts);
// the runner carries it out (tex/output/steps.ts) inside the job's sandbox and time limit.

export type PdfStandard = 'a-1b' | 'a-2b' | 'a-3b' | 'a-2u' | 'a-3u' | 'a-4' | 'a-4f';

/** PDF/UA (issue 40): the kernel's \DocumentMetadata tags the PDF (tagging.ts). */
export type UaStandard = 'ua-1' | 'ua-2';

/**
 * Tagging by the LaTeX kernel (\DocumentMetadata, tagging=on), with the PDF/UA part claimed
 * (if any) and the PDF version it needs; `lang` is the catalog's /Lang.
 */
export interface OutputTagging {
  ua?: UaStandard;
  lang?: string;
  pdfVersion?: '1.7' | '2.0';
}

export interface OutputMetadata {
  title?: string;
  author?: string;
  subject?: string;
  keywords?: string[];
  /** BCP 47 tag, e.g. en-GB. */
  lang?: string;
  creator?: string;
}

export interface OutputPermissions {
  print: boolean;
  modify: boolean;
  copy: boolean;
  annotate: boolean;
  fillForms: boolean;
  accessibility: boolean;
}

export interface OutputEncrypt {
  userPassword: string;
  ownerPassword: string;
  permissions: OutputPermissions;
}

export interface OutputWatermark {
  text: string;
  /** 0..1 */
  opacity: number;
  /** Degrees, counter-clockwise. */
  angle: number;
  /** RGB components 0..1. */
  color: [number, number, number];
  /** 1-based pages; all pages when absent. */
  pages?: number[];
}

/** A caller's PDF whose first page is stamped over (or under) the pages. */
export interface OutputStamp {
  pdf: Buffer;
  underlay: boolean;
  /** 1-based pages; all pages when absent. */
  pages?: number[];
}

export interface OutputAttachment {
  name: string;
  data: Buffer;
  relationship: 'Data' | 'Source' | 'Alternative' | 'Supplement' | 'Unspecified';
  mimeType: string;
  description?: string;
}

export interface OutputPageImages {
  pages: number[] | 'all';
  dpi: number;
  /** Most pages rendered (the plan's bound). */
  maxPages: number;
}

export interface OutputSpec {
  pdfStandard?: PdfStandard;
  /** Tagged PDF (and PDF/UA): the kernel writes the standard's metadata instead of pdfx. */
  tagging?: OutputTagging;
  metadata?: OutputMetadata;
  encrypt?: OutputEncrypt;
  watermark?: OutputWatermark;
  stamp?: OutputStamp;
  attachments?: OutputAttachment[];
  pageImages?: OutputPageImages;
  linearize?: boolean;
  compress?: boolean;
}

/** One rendered page of the delivered PDF. */
export interface PageImage {
  page: number;
  width: number;
  height: number;
  png: Buffer;
}
