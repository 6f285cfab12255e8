import { Ajv, type ValidateFunction } from 'ajv';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, roleAtLeast } from '@dagu-mcp/contracts';
import type { McpCallContext } from '../transport/dispatcher';
import { toolError } from '../transport/tool-error';
import { INTERNAL_ERROR, JsonRpcError } from '../transport/protocol';
import { ExtensionUnavailable, type ExtensionRouter, type ServedTool } from './extension-router';

/** The `tools/call` params relayed (name, arguments, `_meta`). */
export interface ExtensionToolParams {
  readonly name: string;
  readonly arguments?: unknown;
  readonly _meta?: Record<string, unknown>;
}

const ajv = new Ajv({ allErrors: true, strict: false });
/** Compiled input schemas by their JSON text: a catalog's schema compiles once per replica. */
const validators = new Map<string, ValidateFunction>();
const MAX_VALIDATORS = 500;

/**
 * One call of an extension tool, on `/mcp` or through an agent's binding.
 * For every extension but a test fixture the gateway, before anything reaches the extension: checks the tool's minimum role
 * (`unauthorized`), validates `arguments` against the published input schema with ajv
 * (`invalid_tool_input`, `details.errors`), then relays only the principal — never the
 * caller's credentials — with the call deadline. Whatever goes wrong on the extension's
 * side (no answer in time, stopped while serving, an error or a malformed result) comes
 * back as `resource_unavailable` naming the extension; other tools are not involved.
 *
 * A test fixture's (`MCP_TEST_FIXTURE_EXTENSIONS`) call is relayed as is, its failures thrown
 * as JSON-RPC errors (the MCP conformance fixture's contract).
 */
export async function callExtensionTool(
  router: ExtensionRouter,
  target: ServedTool,
  params: ExtensionToolParams,
  ctx: McpCallContext,
  clientCapabilities: Record<string, unknown>,
): Promise<CallToolResult> {
  const relay = { ...params, name: target.ownName };
  if (target.verbatim) {
    const relayed = CallToolResultSchema.safeParse(
      await router.call(target.extension, 'tools/call', relay, ctx, clientCapabilities),
    );
    if (!relayed.success) throw new JsonRpcError(INTERNAL_ERROR, `Tool ${params.name} returned a malformed result.`);
    return relayed.data;
  }
  if (!roleAtLeast(ctx.principal.role, target.minRole))
    return toolError(
      new DaguError('unauthorized', `Tool ${params.name} needs role ${target.minRole} or higher.`).toServiceError(),
    );
  const args = params.arguments ?? {};
  const invalid = validate(target.inputSchema, args);
  if (invalid !== undefined)
    return toolError(
      new DaguError('invalid_tool_input', `Invalid arguments for ${params.name}: ${invalid[0] ?? 'rejected'}.`, {
        details: { errors: invalid },
      }).toServiceError(),
    );
  try {
    const answer = await router.call(
      target.extension,
      'tools/call',
      { ...relay, arguments: args },
      ctx,
      clientCapabilities,
      true,
    );
    const relayed = CallToolResultSchema.safeParse(answer);
    if (relayed.success) return relayed.data;
    return unavailable(target.extension, `Extension ${target.extension} answered a malformed result.`);
  } catch (err) {
    if (err instanceof ExtensionUnavailable) return unavailable(target.extension, err.message);
    if (err instanceof JsonRpcError)
      return unavailable(target.extension, `Extension ${target.extension} failed: ${err.message.slice(0, 300)}`);
    throw err;
  }
}

function unavailable(extension: string, message: string): CallToolResult {
  return toolError(new DaguError('resource_unavailable', message, { details: { extension } }).toServiceError());
}

/** The ajv messages of `args` against `schema` (`<path> <message>`), or undefined when valid or no schema. */
function validate(schema: Record<string, unknown> | undefined, args: unknown): string[] | undefined {
  if (schema === undefined) return undefined;
  const key = JSON.stringify(schema);
  let check = validators.get(key);
  if (check === undefined) {
    try {
      check = ajv.compile(schema);
    } catch {
      return ['the tool publishes an input schema that does not compile'];
    }
    if (validators.size >= MAX_VALIDATORS) validators.clear();
    validators.set(key, check);
  }
  if (check(args)) return undefined;
  return (check.errors ?? [])
    .slice(0, 20)
    .map((e) => `${e.instancePath === '' ? '/' : e.instancePath} ${e.message ?? 'is invalid'}`);
}
