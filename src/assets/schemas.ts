// Wire schemas of the stored asset library (SPEC §2.7, §4.3b), shared by the HTTP routes
// and the MCP tools. Name and content rules have their own SPEC codes, so the schemas only
// fix the types; the service applies the rules.
import { Type } from '@sinclair/typebox';
import { ASSET_NAME_RULE } from '../asset-name.js';
import { ASSET_EXTENSIONS } from '../quota/plans.js';

export const AssetName = Type.String({
  description: `File name: ${ASSET_NAME_RULE}; the extension one of ${ASSET_EXTENSIONS.join(', ')}. Unique per account, case-insensitive.`,
  examples: ['logo.png'],
});

export const SaveAssetBody = Type.Object(
  {
    name: AssetName,
    content_base64: Type.String({ description: 'The file bytes, base64 (standard alphabet). Sizes count decoded bytes.' }),
    content_type: Type.Optional(
      Type.String({ description: 'MIME type; inferred from the extension when omitted, and must match the file when given.' }),
    ),
  },
  { additionalProperties: false },
);

export const AssetBody = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  content_type: Type.String(),
  size_bytes: Type.Integer(),
  sha256: Type.String({ description: 'SHA-256 of the bytes, hex' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export const AssetWithContentBody = Type.Intersect([AssetBody, Type.Object({ content_base64: Type.String() })]);

export const SaveAssetResult = Type.Object({ asset: AssetBody, created: Type.Boolean() });

export const AssetListBody = Type.Object({
  assets: Type.Array(AssetBody),
  count: Type.Integer(),
  total_bytes: Type.Integer(),
  count_limit: Type.Union([Type.Integer(), Type.Null()], { description: 'null when unlimited' }),
  total_bytes_limit: Type.Integer(),
  remaining_bytes: Type.Integer(),
});

export const GetAssetResult = Type.Object({ asset: AssetWithContentBody });

export const AssetIdParam = Type.Object({
  id_or_name: Type.String({ description: 'Numeric id, or the (URL-encoded) name matched case-insensitively' }),
});
