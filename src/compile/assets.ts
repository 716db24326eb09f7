// The resolver used until the asset library is wired in: a compile without asset fields
// gets no files; any asset field is refused.
import type { Caller } from '../accounts/caller.js';
import { ServiceError } from '../errors.js';
import type { AssetResolver, ResolvedAssets } from './types.js';

export class NoAssets implements AssetResolver {
  async forCompile(_caller: Caller, input: { assets?: unknown; use_stored_assets?: unknown }): Promise<ResolvedAssets> {
    if (input.assets === undefined && input.use_stored_assets === undefined) {
      return { files: [], ephemeral: [], stored: [] };
    }
    throw new ServiceError('assets_not_allowed', 'This server does not accept assets with a compile.');
  }
}
