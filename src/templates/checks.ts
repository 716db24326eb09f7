// The checks a saved template's input passes before anything is read or written (name,
// description, instructions and source sizes against the plan; the promote body; the
// placeholder engine) and the refusals of SPEC §3's kind rules, each worded once.
import type { AccountCaller } from '../accounts/caller.js';
import { errors, ServiceError, type FieldError, validationFailed, invalidField } from '../errors.js';
import { limitsOf, TEMPLATE_DESCRIPTION_MAX, TEMPLATE_INSTRUCTIONS_MAX, TEMPLATE_NAME_MAX } from '../quota/plans.js';
import type { TemplateRow } from '../storage/schema.js';
import type { PromoteInput } from './schemas.js';

/** validation_failed listing every bad field of `input` and of the source `source.field`, if any. */
export function checkFields(
  caller: AccountCaller,
  input: { name?: unknown; description?: unknown; instructions?: unknown },
  source: { field: string; value: unknown } | null,
): void {
  const fields: FieldError[] = [];
  const text = (field: string, value: unknown, max: number, opts: { nullable?: boolean; min?: number } = {}) => {
    if (value === undefined || (value === null && opts.nullable)) return;
    if (typeof value !== 'string') {
      fields.push({ field, rule: 'type', message: opts.nullable ? 'must be string or null' : 'must be string' });
    } else if (value.length > max) {
      fields.push({ field, rule: 'maxLength', limit: max, message: `must NOT have more than ${max} characters` });
    } else if (opts.min && value.trim().length < opts.min) {
      fields.push({ field, rule: 'minLength', limit: opts.min, message: `must NOT have fewer than ${opts.min} characters` });
    }
  };
  text('name', input.name, TEMPLATE_NAME_MAX, { min: 1 });
  text('description', input.description, TEMPLATE_DESCRIPTION_MAX);
  text('instructions', input.instructions, TEMPLATE_INSTRUCTIONS_MAX, { nullable: true });
  if (source && source.value !== undefined) {
    const plan = caller.account.plan;
    const max = limitsOf(plan).maxLatexBytes;
    if (typeof source.value !== 'string') {
      fields.push({ field: source.field, rule: 'type', message: 'must be string' });
    } else if (source.value.trim() === '') {
      fields.push({ field: source.field, rule: 'minLength', limit: 1, message: 'must not be empty' });
    } else if (Buffer.byteLength(source.value) > max) {
      fields.push({
        field: source.field,
        rule: 'maxBytes',
        limit: max,
        message: `must not be larger than ${max} bytes (the ${plan} plan's LaTeX source limit)`,
      });
    }
  }
  if (fields.length) {
    throw validationFailed(fields);
  }
}

/** The placeholder_engine of a V1 save: "liquid", "none" or absent (keep the current kind). */
export function checkEngine(engine: unknown): asserts engine is 'liquid' | 'none' | undefined {
  if (engine !== undefined && engine !== 'liquid' && engine !== 'none') {
    throw errors.invalid_placeholder_engine(`placeholder_engine must be "liquid" or "none" (or omitted to keep the current kind), got ${JSON.stringify(engine)}.`,
      { allowed: ['liquid', 'none'] },
    );
  }
}

/** The optional promote body: absent, or an object with at most latex_with_placeholders. */
export function promoteInput(body: unknown): PromoteInput {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw invalidField('body', 'type', 'must be object');
  }
  const { latex_with_placeholders, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) {
    throw validationFailed(
      unknown.map((field) => ({ field, rule: 'unknown_field', message: 'must NOT have additional properties' })),
      { message: `Request is invalid: unknown field ${unknown.join(', ')}` },
    );
  }
  return { latex_with_placeholders } as PromoteInput;
}

export function missing(field: string): ServiceError {
  return invalidField(field, 'required', `must have required property '${field}'`, { message: `Request is invalid: ${field} is required` });
}

export function nameTaken(name: string): ServiceError {
  return errors.name_taken(`A template named "${name}" already exists in this account (names are case-insensitive).`, {
    name,
  });
}

export function placeholdersInV1(): ServiceError {
  return errors.liquid_placeholders_in_v1_template('The source contains Liquid placeholders ({{ … }} or {% … %}). Send placeholder_engine: "liquid" to store it as a placeholder template, or "none" to store it as raw LaTeX.',
    { allowed: ['liquid', 'none'] },
  );
}

export function engineMismatch(row: TemplateRow): ServiceError {
  return errors.template_engine_mismatch(`"${row.name}" is a raw LaTeX (V1) template; convert it with POST /api/v2/templates/${row.id}/promote first.`,
    { template_id: row.id, placeholder_engine: 'none' },
  );
}

export function downgradeRefused(row: TemplateRow): ServiceError {
  return errors.engine_downgrade_not_supported(`"${row.name}" is a placeholder (Liquid) template and cannot be turned back into raw LaTeX. Save the raw source under a new name instead.`,
    { template_id: row.id },
  );
}

export function alreadyV2(row: TemplateRow): ServiceError {
  return errors.already_v2(`"${row.name}" is already a placeholder (V2) template.`, { template_id: row.id });
}
