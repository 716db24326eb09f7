// Validate for a saved placeholder template (docs/api.md, "Validate"): `data` against the
// schema of the latest (or a kept) version, as render would check it, without rendering or
// charging. POST /api/v2/templates/{id}/validate and MCP `validate` with `template`.
import type { Static } from '@sinclair/typebox';
import type { Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import { errors, isServiceError } from '../errors.js';
import type { Counters } from '../quota/counters.js';
import { chargeValidate } from '../quota/validate-limit.js';
import { refusalFinding } from '../compile/validate.js';
import type { TemplateValidateBody, ValidateFinding, ValidateResponse } from '../compile/validate-schemas.js';
import { checkDataSize } from './data-size.js';
import type { JsonSchema } from './schema.js';
import type { TemplateService } from './service.js';
import { validateData } from './validate.js';

type Finding = Static<typeof ValidateFinding>;

export class TemplateValidateService {
  constructor(
    private readonly templates: TemplateService,
    private readonly deps: { counters: Counters; clock: Clock; perMinute: () => number },
  ) {}

  async validate(caller: Caller, idOrName: string, body: Static<typeof TemplateValidateBody>): Promise<Static<typeof ValidateResponse>> {
    const latest = await this.templates.owned(caller, idOrName);
    await chargeValidate(this.deps.counters, this.deps.clock.now(), caller, this.deps.perMinute());
    const row = await this.templates.rows.versions.asOf(latest, body.version);
    const findings: Finding[] = [];
    const data = body.data ?? {};
    try {
      if (row.kind !== 'liquid') {
        throw errors.template_engine_mismatch(`"${latest.name}" ${row === latest ? 'is' : `version ${row.version} was saved as`} a raw LaTeX (V1) template: compile it, or promote it before render.`, {
          template_id: latest.id,
          placeholder_engine: 'none',
        });
      }
      if (typeof data !== 'object' || data === null || Array.isArray(data)) {
        throw errors.invalid_data_shape(`"data" must be a JSON object.`, { got: data === null ? 'null' : Array.isArray(data) ? 'array' : typeof data });
      }
      checkDataSize(data);
    } catch (err) {
      if (!isServiceError(err)) throw err;
      findings.push(refusalFinding('request', err));
      return { valid: false, findings, checked: ['request'] };
    }
    const schema = row.schema_json ? (JSON.parse(row.schema_json) as JsonSchema) : {};
    const problems = validateData(schema, data);
    for (const field of problems?.missing_fields ?? []) {
      findings.push({ kind: 'data', severity: 'error', code: 'schema_validation_failed', name: field, message: `data is missing ${field}.` });
    }
    for (const e of problems?.type_errors ?? []) {
      findings.push({ kind: 'data', severity: 'error', code: 'schema_validation_failed', name: e.field, message: `${e.field} must be ${e.expected} (got ${e.got}).` });
    }
    return { valid: findings.length === 0, findings, checked: ['request', 'data'] };
  }
}
