// The stored asset library (/api/v1/assets) as tools: list, get, save, delete.
import { paidPlansPhrase } from '../../quota/prose.js';
import { Type, type Static } from '@sinclair/typebox';
import type { Asset } from '../../assets/library.js';
import { AssetIdParam, AssetListBody, GetAssetResult, SaveAssetBody, SaveAssetResult } from '../../assets/schemas.js';
import { assetNameField } from '../../wire/json-safety.js';
import { ASSET_NAME_RULE } from '../../asset-name.js';
import { ASSET_EXTENSIONS } from '../../quota/plans.js';
import type { ContentBlock } from '../results.js';
import { accountOf, defineTool } from '../tool.js';

const PAID = `Needs an API key on a paid plan (${paidPlansPhrase()}).`;

/** The route's path parameter; a number is accepted too, as list_assets reports ids as numbers. */
const AssetRef = Type.Object({
  id_or_name: Type.Union(
    [Type.String({ ...AssetIdParam.properties.id_or_name, description: 'Name, or numeric id as text' }), Type.Integer({ minimum: 1 })],
    { description: 'Numeric id, or the name matched case-insensitively' },
  ),
});

function ref(args: Static<typeof AssetRef>): string {
  return String(args.id_or_name);
}

const DeletedAsset = Type.Object({ deleted: Type.Literal(true), id_or_name: Type.String() });

function describe(asset: Asset): string {
  return `${asset.name} (id ${asset.id}, ${asset.content_type}, ${asset.size_bytes} bytes)`;
}

export const listAssetsTool = defineTool({
  name: 'list_assets',
  title: 'List stored assets',
  description: `Lists the images and PDFs in the account's asset library (names, ids, types, sizes; no content) with the count and bytes used against the plan's caps. Any of them can be placed in a compile with use_stored_assets: ["name"] and \\includegraphics{name}. ${PAID}`,
  inputSchema: Type.Object({}),
  outputSchema: AssetListBody,
  auth: 'required',
  public: false,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: async (_args, context) => context.services.assets.list(accountOf(context)),
  summarize: (list) => {
    const head = `${list.count} stored asset(s), ${list.total_bytes} of ${list.total_bytes_limit} bytes used (limit ${list.count_limit ?? 'unlimited'} assets).`;
    return [head, ...list.assets.map((asset) => `- ${describe(asset)}`)].join('\n');
  },
});

export const getAssetTool = defineTool({
  name: 'get_asset',
  title: 'Get a stored asset',
  description: `Fetches one asset of the library by numeric id or by name (case-insensitive), with its bytes in content_base64 (images are also attached as image content). Fails with not_found when the account has no such asset: call list_assets for the names. ${PAID}`,
  inputSchema: AssetRef,
  outputSchema: GetAssetResult,
  auth: 'required',
  assetNames: assetNameField('id_or_name'),
  public: false,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: async (args, context) => context.services.assets.get(accountOf(context), ref(args)),
  summarize: ({ asset }) => `Asset ${describe(asset)}; its bytes are in structuredContent.asset.content_base64.`,
  attachments: ({ asset }) => {
    const blocks: ContentBlock[] = [];
    if (asset.content_type === 'image/png' || asset.content_type === 'image/jpeg') {
      blocks.push({ type: 'image', data: asset.content_base64, mimeType: asset.content_type });
    } else {
      blocks.push({
        type: 'resource',
        resource: { uri: `quire://assets/${encodeURIComponent(asset.name)}`, mimeType: asset.content_type, blob: asset.content_base64 },
      });
    }
    return blocks;
  },
});

export const saveAssetTool = defineTool({
  name: 'save_asset',
  title: 'Save a stored asset',
  description: `Uploads an image or PDF to the account's library under \`name\` (${ASSET_EXTENSIONS.join(', ')}; ${ASSET_NAME_RULE}), replacing any asset of the same name (any case). The bytes must really be that format (a renamed file is refused) and fit the plan's count and total-bytes caps (see usage). Then compile with use_stored_assets: ["name"]. ${PAID}`,
  inputSchema: SaveAssetBody,
  outputSchema: SaveAssetResult,
  auth: 'required',
  assetNames: assetNameField('name'),
  public: false,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  run: async (args, context) => context.services.assets.save(accountOf(context), args),
  summarize: ({ asset, created }) => {
    return `${created ? 'Saved new' : 'Replaced'} asset ${describe(asset)}. Use it in a compile with use_stored_assets: ["${asset.name}"] and \\includegraphics{${asset.name}}.`;
  },
});

export const deleteAssetTool = defineTool({
  name: 'delete_asset',
  title: 'Delete a stored asset',
  description: `Deletes one asset of the library by numeric id or name (case-insensitive). Later compiles that name it fail with asset_not_found. Fails with not_found when there is no such asset. ${PAID}`,
  inputSchema: AssetRef,
  outputSchema: DeletedAsset,
  auth: 'required',
  assetNames: assetNameField('id_or_name'),
  public: false,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  run: async (args, context): Promise<Static<typeof DeletedAsset>> => {
    await context.services.assets.delete(accountOf(context), ref(args));
    return { deleted: true, id_or_name: ref(args) };
  },
  summarize: (body) => `Deleted asset ${body.id_or_name}.`,
});

export const assetTools = [listAssetsTool, getAssetTool, saveAssetTool, deleteAssetTool];
