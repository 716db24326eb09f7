// /api/v1/assets: the stored asset library (SPEC §4.3b). Rules live in AssetService.
import type { Services } from '../services.js';
import { AssetIdParam, AssetListBody, GetAssetResult, SaveAssetBody, SaveAssetResult } from '../assets/schemas.js';
import { accountOf } from './auth.js';
import { assetNameField } from '../wire/json-safety.js';
import type { App } from './types.js';

export function assetRoutes(app: App, services: Services): void {
  app.post(
    '/api/v1/assets',
    {
      config: {
        auth: 'paid',
        assetNames: assetNameField('name'),
        errors: ['invalid_asset_filename', 'invalid_asset_format', 'invalid_asset_encoding', 'asset_limit_reached', 'storage_quota_exceeded', 'storage_unavailable', 'storage_full', 'too_many_concurrent_compiles', 'failure_budget_exhausted'],
      },
      schema: {
        operationId: 'saveAsset',
        summary: 'Upload an asset to the library (upsert by name)',
        description: '201 when the name is new, 200 when an asset of that name (any case) is replaced. Paid plans.',
        tags: ['assets'],
        body: SaveAssetBody,
        response: { 200: SaveAssetResult, 201: SaveAssetResult },
      },
    },
    async (req, reply) => {
      const result = await services.assets.save(accountOf(req), req.body);
      return reply.code(result.created ? 201 : 200).send(result);
    },
  );

  app.get(
    '/api/v1/assets',
    {
      config: { auth: 'paid' },
      schema: {
        operationId: 'listAssets',
        summary: "List the account's stored assets with totals and limits",
        tags: ['assets'],
        response: { 200: AssetListBody },
      },
    },
    async (req) => services.assets.list(accountOf(req)),
  );

  app.get(
    '/api/v1/assets/:id_or_name',
    {
      config: { auth: 'paid', assetNames: assetNameField('id_or_name'), errors: ['invalid_asset_filename', 'not_found', 'asset_storage_error', 'storage_unavailable'] },
      schema: {
        operationId: 'getAsset',
        summary: 'Fetch one asset with its content',
        tags: ['assets'],
        params: AssetIdParam,
        response: { 200: GetAssetResult },
      },
    },
    async (req) => services.assets.get(accountOf(req), req.params.id_or_name),
  );

  app.delete(
    '/api/v1/assets/:id_or_name',
    {
      config: { auth: 'paid', assetNames: assetNameField('id_or_name'), errors: ['invalid_asset_filename', 'not_found', 'storage_unavailable'] },
      schema: {
        operationId: 'deleteAsset',
        summary: 'Delete an asset; later compiles naming it fail with asset_not_found',
        tags: ['assets'],
        params: AssetIdParam,
        response: { 204: { type: 'null', description: 'Deleted' } },
      },
    },
    async (req, reply) => {
      await services.assets.delete(accountOf(req), req.params.id_or_name);
      return reply.code(204).send();
    },
  );
}
