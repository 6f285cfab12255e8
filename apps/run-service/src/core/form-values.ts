import { isReservedValueName, reservedNameMessage } from '@dagu-mcp/dag-spec';
/**
 * Validates the values of a completed human task against its `form` (a JSON
 * Schema object subset: `properties` with `type` string / integer / number /
 * boolean, `enum`, `minimum` / `maximum`, `minLength` / `maxLength`,
 * `default`; `required`; `additionalProperties: false`) and turns them into
 * step outputs (strings; numbers and booleans in their JSON text). A task
 * without a form accepts any scalar values.
 */

/** The outputs, or what is wrong with the values. */
export type FormCheck = { ok: true; outputs: Record<string, string> } | { ok: false; errors: string[] };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  return undefined;
}

function typeError(name: string, type: unknown, value: unknown): string | undefined {
  if (type === 'string' && typeof value !== 'string') return `${name} must be a string`;
  if (type === 'boolean' && typeof value !== 'boolean') return `${name} must be a boolean`;
  if (type === 'number' && (typeof value !== 'number' || !Number.isFinite(value))) return `${name} must be a number`;
  if (type === 'integer' && (typeof value !== 'number' || !Number.isInteger(value)))
    return `${name} must be an integer`;
  return undefined;
}

function propertyErrors(name: string, schema: Record<string, unknown>, value: unknown): string[] {
  const wrongType = typeError(name, schema.type, value);
  if (wrongType !== undefined) return [wrongType];
  const errors: string[] = [];
  const allowed = schema.enum;
  if (Array.isArray(allowed) && !allowed.some((option) => option === value))
    errors.push(`${name} must be one of ${allowed.map((o) => JSON.stringify(o)).join(', ')}`);
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum)
      errors.push(`${name} must be at least ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum)
      errors.push(`${name} must be at most ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength)
      errors.push(`${name} must have at least ${schema.minLength} characters`);
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength)
      errors.push(`${name} must have at most ${schema.maxLength} characters`);
  }
  if (scalarText(value) === undefined) errors.push(`${name} must be a string, number or boolean`);
  return errors;
}

/** The errors for names no value may take (dagu-model §3: `PATH`, `LD_*`, `DAG_*`, …). */
function reservedNameErrors(names: readonly string[]): string[] {
  return names.filter((name) => isReservedValueName(name)).map((name) => reservedNameMessage(name));
}

/** Checks `values` against `form` (undefined = no form); reserved names are refused with or without a form. */
export function checkFormValues(form: Record<string, unknown> | undefined, values: Record<string, unknown>): FormCheck {
  const errors: string[] = reservedNameErrors(Object.keys(values));
  const outputs: Record<string, string> = {};
  const properties = isRecord(form?.properties) ? form.properties : {};
  const required = Array.isArray(form?.required)
    ? form.required.filter((name): name is string => typeof name === 'string')
    : [];
  const closed = form !== undefined && form.additionalProperties === false;
  for (const [name, value] of Object.entries(values)) {
    const schema = properties[name];
    if (schema === undefined) {
      if (closed) errors.push(`${name} is not a field of the form`);
      else if (scalarText(value) === undefined) errors.push(`${name} must be a string, number or boolean`);
      else outputs[name] = scalarText(value) ?? '';
      continue;
    }
    const found = propertyErrors(name, isRecord(schema) ? schema : {}, value);
    errors.push(...found);
    if (found.length === 0) outputs[name] = scalarText(value) ?? '';
  }
  for (const [name, schema] of Object.entries(properties)) {
    if (name in values) continue;
    const fallback = isRecord(schema) ? scalarText(schema.default) : undefined;
    if (fallback !== undefined) outputs[name] = fallback;
    else if (required.includes(name)) errors.push(`${name} is required`);
  }
  for (const name of required) {
    if (!(name in properties) && !(name in values)) errors.push(`${name} is required`);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, outputs };
}

/** Checks approval `input` against the gate's declared `input` and `required` names. */
export function checkApprovalInput(
  declared: readonly string[],
  required: readonly string[],
  input: Record<string, string>,
): FormCheck {
  const errors: string[] = reservedNameErrors(Object.keys(input));
  for (const name of required) if ((input[name] ?? '') === '') errors.push(`${name} is required`);
  if (declared.length > 0)
    for (const name of Object.keys(input))
      if (!declared.includes(name)) errors.push(`${name} is not an input of the approval`);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, outputs: { ...input } };
}

/**
 * Checks the `input` of a rejection: only names the gate declares in its
 * `input` list (a gate that declares none takes no rejection input), so a
 * reviewer can pass feedback to the steps a `rewind_to` runs again but never
 * set other variables of theirs (`PATH`, `DAG_RUN_ID`, …). `required` does not
 * apply: a rejection needs no approval input.
 */
export function checkRejectionInput(declared: readonly string[], input: Record<string, string>): FormCheck {
  const errors = reservedNameErrors(Object.keys(input));
  errors.push(
    ...Object.keys(input)
      .filter((name) => !declared.includes(name) && !isReservedValueName(name))
      .map((name) =>
        declared.length === 0 ? `${name}: the approval declares no input` : `${name} is not an input of the approval`,
      ),
  );
  return errors.length > 0 ? { ok: false, errors } : { ok: true, outputs: { ...input } };
}
