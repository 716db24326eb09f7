// The `output` object of a compile or render request (extension of SPEC 1.5.0, issue 23;
// docs/pdf-output.md), declared once: the HTTP routes, the MCP tools and the service's own
// check (compile/output.ts) use this schema. Passwords are bounded by qpdf's AES-256 limit.
import { Type, type Static } from '@sinclair/typebox';
import { SignBody } from '../signing/schema.js';

export const PDF_STANDARDS = ['a-1b', 'a-2b', 'a-3b', 'a-2u', 'a-3u'] as const;
/** Issue 40: PDF/A-4 (written by the kernel, with tagging) and PDF/UA (standards.ts). */
export const KERNEL_STANDARDS = ['a-4', 'a-4f', 'ua-1', 'ua-2'] as const;
const STANDARD = Type.Union([...PDF_STANDARDS, ...KERNEL_STANDARDS].map((level) => Type.Literal(level)));
export const PASSWORD_MAX_BYTES = 127;
export const METADATA_MAX = 1000;
export const WATERMARK_MAX = 200;
export const DPI_MIN = 72;
export const DPI_MAX = 200;

const text = (description: string, maxLength = METADATA_MAX) => Type.Optional(Type.String({ maxLength, description }));
const allowed = (what: string) => Type.Optional(Type.Boolean({ default: true, description: `Allow ${what} (default true)` }));

export const OutputBody = Type.Object(
  {
    pdf_standard: Type.Optional(
      Type.Union([STANDARD, Type.Array(STANDARD, { minItems: 1, maxItems: 2 })], {
        description:
          'Make the PDF conform to PDF/A (pdfx) and check it: a-1b with PDFBox Preflight, the others structurally. Not with encrypt or a text watermark. ' +
          'ua-1/ua-2: a tagged PDF/UA (the kernel\'s \\DocumentMetadata; needs metadata.lang and lualatex or pdflatex), alone or with a compatible PDF/A level: ["a-2b","ua-1"] (PDF 1.7), ["a-4f","ua-2"] (PDF 2.0). The answer carries a conformance report.',
      }),
    ),
    tagged: Type.Optional(Type.Boolean({ description: 'Tag the PDF (structure tree, alt text, /Lang from metadata.lang) without claiming PDF/UA; lualatex or pdflatex. The answer carries a conformance report.' })),
    attachments: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object(
          {
            content_base64: Type.String({ description: 'The file bytes, base64' }),
            relationship: Type.Optional(Type.Union(['Data', 'Source', 'Alternative', 'Supplement', 'Unspecified'].map((r) => Type.Literal(r)), { default: 'Data' })),
            mime_type: Type.Optional(Type.String({ maxLength: 100, pattern: '^[a-z0-9.+-]+/[a-z0-9.+-]+$', default: 'application/octet-stream' })),
            description: text('Shown by PDF readers', 200),
          },
          { additionalProperties: false },
        ),
        { description: 'Files embedded in the PDF by name (asset name rule), PDF/A-3 associated files (e.g. factur-x.xml: with an a-3 pdf_standard the XMP also gets the Factur-X fields, its conformance level read from the XML). Counted with the plan\'s asset limits.' },
      ),
    ),
    metadata: Type.Optional(
      Type.Object(
        {
          title: text('Document title'),
          author: text('Author'),
          subject: text('Subject'),
          keywords: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 })),
          lang: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$', maxLength: 35, description: 'BCP 47 language tag, e.g. en-GB' })),
          creator: text('Creating application'),
        },
        { additionalProperties: false, description: 'Written to the Info dictionary and XMP.' },
      ),
    ),
    encrypt: Type.Optional(
      Type.Object(
        {
          user_password: Type.Optional(Type.String({ description: `Opens the PDF; empty opens it without a password (at most ${PASSWORD_MAX_BYTES} bytes)` })),
          owner_password: Type.String({ minLength: 1, description: `Lifts the permissions (at most ${PASSWORD_MAX_BYTES} bytes)` }),
          permissions: Type.Optional(
            Type.Object(
              { print: allowed('printing'), modify: allowed('changes'), copy: allowed('copying text and images'), annotate: allowed('comments'), fill_forms: allowed('filling forms'), accessibility: allowed('screen readers') },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false, description: 'AES-256 (qpdf). Passwords are never logged, stored or replayed.' },
      ),
    ),
    watermark: Type.Optional(
      Type.Object(
        {
          text: Type.Optional(Type.String({ minLength: 1, maxLength: WATERMARK_MAX, description: 'Latin-1 text stamped over the pages (or `asset`)' })),
          asset: Type.Optional(
            Type.String({ minLength: 1, maxLength: 255, description: "Instead of text: the name of a PDF among this compile's assets (inline `assets` or `use_stored_assets`); its first page is stamped with qpdf" }),
          ),
          underlay: Type.Optional(Type.Boolean({ default: false, description: 'With asset: stamp under the page content instead of over it' })),
          opacity: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.2, description: 'Text only' })),
          angle: Type.Optional(Type.Number({ minimum: -360, maximum: 360, default: 45 })),
          color: Type.Optional(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', default: '#808080' })),
          pages: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, maxItems: 1000, description: 'Pages to stamp; all when absent' })),
        },
        { additionalProperties: false },
      ),
    ),
    page_images: Type.Optional(
      Type.Object(
        {
          pages: Type.Union([Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, maxItems: 100 }), Type.Literal('all')]),
          dpi: Type.Optional(Type.Integer({ minimum: DPI_MIN, maximum: DPI_MAX, default: 72 })),
          format: Type.Optional(Type.Literal('png')),
        },
        { additionalProperties: false, description: "PNG renderings of pages, returned as signed links in page_images; pages × dpi bounded by the plan (pageImageBudget)." },
      ),
    ),
    linearize: Type.Optional(Type.Boolean({ description: 'Fast web view' })),
    compress: Type.Optional(Type.Boolean({ description: 'Recompress streams and pack objects into object streams (not for a-1b)' })),
    sign: Type.Optional(SignBody),
  },
  { additionalProperties: false, description: 'Extension of SPEC 1.5.0: what is done to the PDF before delivery (docs/pdf-output.md).' },
);

export type OutputRequest = Static<typeof OutputBody>;

export const PageImageBody = Type.Object({
  page: Type.Integer(),
  url: Type.String({ format: 'uri', description: 'Signed link, like pdf_url, with the same expiry' }),
  width: Type.Integer(),
  height: Type.Integer(),
});

/** Issue 40: the checks that ran on a PDF with pdf_standard or tagged (tex/output/conformance.ts), also the body of /api/v1/pdf/check. */
export const ConformanceBody = Type.Object(
  {
    standards: Type.Array(Type.String(), { description: 'The standards claimed: asked for, or (pdf/check without standards) found in the XMP' }),
    checks: Type.Array(
      Type.Object({
        id: Type.String({ description: 'What is checked, e.g. structure_tree_root, lang, figures_alt, heading_levels, xmp_pdfuaid, pdfbox_preflight' }),
        passed: Type.Boolean(),
        detail: Type.String(),
      }),
    ),
    violations: Type.Array(Type.String(), { description: 'One "<id>: <detail>" per failed check' }),
    validators: Type.Array(Type.String(), { description: 'Validators that ran besides these checks (Apache PDFBox Preflight for a-1b). The checks are necessary conditions, not a certification: no document is called compliant with a standard no validator here checked.' }),
  },
  { description: 'Conformance report (extension, issue 40; docs/pdf-output.md)' },
);
