import { z } from 'zod';
import { DaguError } from '@dagu-mcp/contracts';

/** A declared DAG param as dag-service reports it in the DAG detail (`dag.params`, dag-spec `ParamDef`). */
const ParamDefSchema = z.object({
  name: z.string(),
  default: z.string().nullable(),
  description: z.string().optional(),
  type: z.enum(['string', 'integer', 'number', 'boolean']).optional(),
  enum: z.array(z.string()).optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  required: z.boolean().optional(),
});
export type ParamDef = z.infer<typeof ParamDefSchema>;

/** The declared params of a normalized DAG (`dag` of the DAG detail); none when absent or unreadable. */
export function paramsOf(dag: Record<string, unknown>): ParamDef[] {
  const parsed = z.array(ParamDefSchema).safeParse(dag.params);
  return parsed.success ? parsed.data : [];
}

type JsonSchemaProperty = Record<string, unknown>;

/** A declared default as a value of the param's type; the string when it does not read as one. */
function typedDefault(param: ParamDef): unknown {
  const raw = param.default;
  if (raw === null) return undefined;
  if (param.type === 'integer' && /^-?\d+$/.test(raw)) return Number(raw);
  if (param.type === 'number' && raw.trim() !== '' && Number.isFinite(Number(raw))) return Number(raw);
  if (param.type === 'boolean' && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}

/**
 * The input schema of a DAG tool: a flat object with one
 * property per declared param — its type (string unless declared), enum,
 * bounds, default and description — `required` for the params declared
 * required, no other properties, no root `oneOf`.
 */
export function dagToolInputSchema(params: readonly ParamDef[]): {
  type: 'object';
  properties: Record<string, JsonSchemaProperty>;
  required?: string[];
  additionalProperties: false;
} {
  const properties: Record<string, JsonSchemaProperty> = {};
  for (const p of params) {
    const prop: JsonSchemaProperty = { type: p.type ?? 'string' };
    if (p.description !== undefined) prop.description = p.description;
    if (p.enum !== undefined) prop.enum = p.type === 'integer' || p.type === 'number' ? p.enum.map(Number) : p.enum;
    if (p.minimum !== undefined) prop.minimum = p.minimum;
    if (p.maximum !== undefined) prop.maximum = p.maximum;
    const value = typedDefault(p);
    if (value !== undefined) prop.default = value;
    properties[p.name] = prop;
  }
  const required = params.filter((p) => p.required === true).map((p) => p.name);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

const bad = (field: string, message: string): DaguError => new DaguError('invalid_tool_input', message, { field });

/**
 * Checks a DAG tool's arguments against its declared params and returns
 * them as the run's params (each value as text, the DAG's own form).
 *
 * @throws DaguError `invalid_tool_input` with `field`: not an object, an
 *   undeclared param, a value of the wrong type, outside `enum` or the
 *   bounds, or a required param missing
 */
export function dagToolParams(args: unknown, params: readonly ParamDef[]): Record<string, string> {
  const input = args ?? {};
  if (typeof input !== 'object' || Array.isArray(input)) throw bad('arguments', 'The arguments must be a JSON object.');
  const declared = new Map(params.map((p) => [p.name, p]));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(input)) {
    const p = declared.get(name);
    if (p === undefined)
      throw bad(name, `Unknown param ${name}; this DAG declares ${[...declared.keys()].join(', ') || 'none'}.`);
    if (value === null || value === undefined) continue;
    out[name] = checkValue(p, value);
  }
  for (const p of params) {
    if (p.required === true && out[p.name] === undefined) throw bad(p.name, `The param ${p.name} is required.`);
  }
  return out;
}

function checkValue(p: ParamDef, value: unknown): string {
  const type = p.type ?? 'string';
  const ok =
    type === 'string'
      ? typeof value === 'string'
      : type === 'boolean'
        ? typeof value === 'boolean'
        : typeof value === 'number' && Number.isFinite(value) && (type === 'number' || Number.isInteger(value));
  if (!ok) throw bad(p.name, `The param ${p.name} must be ${type === 'integer' ? 'an integer' : `a ${type}`}.`);
  const text = String(value);
  if (p.enum !== undefined && !p.enum.includes(text))
    throw bad(p.name, `The param ${p.name} must be one of ${p.enum.join(', ')}.`);
  if (typeof value === 'number') {
    if (p.minimum !== undefined && value < p.minimum)
      throw bad(p.name, `The param ${p.name} must be at least ${p.minimum}.`);
    if (p.maximum !== undefined && value > p.maximum)
      throw bad(p.name, `The param ${p.name} must be at most ${p.maximum}.`);
  }
  return text;
}
