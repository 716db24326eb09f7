// The `output.sign` object (PAdES signature, issue 40) and the bodies of
// /api/v1/signing-identities, declared once: output-schema.ts nests SignBody in `output`, so
// the HTTP routes, the MCP tools and the OpenAPI document list the same fields.
import { Type, type Static } from '@sinclair/typebox';

/** Largest PKCS#12 accepted (decoded): a key and a chain of a few certificates fit in 16 KB. */
export const P12_MAX_BYTES = 32 * 1024;
export const P12_BASE64_MAX = Math.ceil(P12_MAX_BYTES / 3) * 4 + 1024; // room for line breaks
export const P12_PASSWORD_MAX = 1024;
export const IDENTITY_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';

const p12Base64 = Type.String({ minLength: 1, maxLength: P12_BASE64_MAX, description: `A PKCS#12 (.p12/.pfx) file, base64 (at most ${P12_MAX_BYTES} bytes decoded): the private key and its certificate (and chain)` });
const password = Type.String({ maxLength: P12_PASSWORD_MAX, description: 'Password of the PKCS#12. Never logged, stored in a job or replayed.' });
/** Longest `reason`, `location` and `contact_info` (the studio's inputs take it too). */
export const SIGN_TEXT_MAX = 200;
const text = (description: string) => Type.Optional(Type.String({ maxLength: SIGN_TEXT_MAX, description }));

export const SignBody = Type.Object(
  {
    p12_base64: Type.Optional(p12Base64),
    password: Type.Optional(password),
    identity: Type.Optional(Type.String({ pattern: IDENTITY_NAME_PATTERN, description: 'Instead of p12_base64: the name of a stored signing identity (POST /api/v1/signing-identities; paid plans)' })),
    reason: text('Reason for signing (/Reason)'),
    location: text('Where it was signed (/Location)'),
    contact_info: text('How to reach the signer (/ContactInfo)'),
    timestamp: Type.Optional(Type.Boolean({ description: "RFC 3161 timestamp from the server's timestamp authority (PAdES B-T); 422 timestamp_not_configured when it has none" })),
  },
  {
    additionalProperties: false,
    description:
      'PAdES signature (ETSI.CAdES.detached, B-B, or B-T with timestamp), the last step, as an incremental update (the unsigned PDF stays a byte prefix, so a PDF/A claim survives). Exactly one of p12_base64 (with password) and identity. Not with encrypt or linearize.',
  },
);
export type SignRequest = Static<typeof SignBody>;

export const CreateIdentityBody = Type.Object(
  {
    name: Type.String({ pattern: IDENTITY_NAME_PATTERN, description: 'Letters, digits, _ . -; at most 64 characters; unique in the account (case-insensitive)' }),
    p12_base64: p12Base64,
    password,
  },
  { additionalProperties: false },
);
export type CreateIdentity = Static<typeof CreateIdentityBody>;

export const IdentityBody = Type.Object({
  name: Type.String(),
  subject: Type.String({ description: 'Distinguished name of the signing certificate' }),
  issuer: Type.String(),
  not_before: Type.String({ format: 'date-time' }),
  not_after: Type.String({ format: 'date-time' }),
  fingerprint_sha256: Type.String({ description: 'SHA-256 of the certificate (DER), hex with colons' }),
  key_type: Type.String({ description: 'RSA or EC' }),
  created_at: Type.String({ format: 'date-time' }),
});
export type IdentityInfo = Static<typeof IdentityBody>;

export const IdentityListBody = Type.Object({ identities: Type.Array(IdentityBody) });
