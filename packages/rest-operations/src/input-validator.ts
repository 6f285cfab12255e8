import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import { mappingError } from './build-request';

/**
 * Tool input checked against an operation version's input schema (JSON Schema 2020-12): each schema is compiled once and kept by its version key (a version
 * never changes once published), at most `maxEntries` of them.
 */
export class InputValidators {
  private readonly ajv = new Ajv2020({ allErrors: false, strict: false, validateFormats: false });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly maxEntries = 1000) {}

  /**
   * @param key the operation version's id (e.g. `<operationId>@<version>`)
   * @throws DaguError `invalid_tool_input` on the first failing property, `details.operation` set
   * @throws Error when the schema itself does not compile (a publish-time check should have caught it)
   */
  check(operation: string, key: string, schema: Record<string, unknown>, input: unknown): void {
    let validate = this.compiled.get(key);
    if (validate === undefined) {
      validate = this.ajv.compile(schema);
      if (this.compiled.size >= this.maxEntries) this.compiled.clear();
      this.compiled.set(key, validate);
    }
    if (validate(input)) return;
    const first = validate.errors?.[0];
    throw mappingError(operation, fieldOf(first), first?.message ?? 'does not match the input schema');
  }

  /** Compiles a schema without keeping it: the publish-time check that it is valid JSON Schema. */
  assertCompiles(schema: Record<string, unknown>): void {
    this.ajv.compile(schema);
  }
}

function fieldOf(error: ErrorObject | undefined): string {
  if (error === undefined) return '';
  const params: Record<string, unknown> = error.params;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') return params.missingProperty;
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string')
    return params.additionalProperty;
  return error.instancePath.replace(/^\//, '').replace(/\//g, '.');
}
