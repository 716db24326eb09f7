// The checks a template save makes on its text fields before anything is written: names,
// descriptions and instructions within their lengths, and the source within the plan's limit.
import type { AccountCaller } from '../accounts/caller.js';
import { type FieldError, invalidField, type ServiceError, validationFailed } from '../errors.js';
import { limitsOf, TEMPLATE_DESCRIPTION_MAX, TEMPLATE_INSTRUCTIONS_MAX, TEMPLATE_NAME_MAX } from '../quota/plans.js';

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

export function missingField(field: string): ServiceError {
  return invalidField(field, 'required', `must have required property '${field}'`, { message: `Request is invalid: ${field} is required` });
}
