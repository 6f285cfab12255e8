/**
 * The tool input parsers at full scale (issue 18 "property tests at scale"):
 * `parseReadInput`, `parseChangeInput` and `parseExecuteInput` take any
 * arguments and either return a request or throw a `DaguError` with an input
 * code — never another exception (which the boundary would report as
 * `internal_error`), never `internal_error` itself. gateway-inputs.property.test.ts
 * drives the same arguments through the real stack.
 *
 * Cases: `PROPERTY_RUNS` (10,000 in the fault suite), else 200.
 */
import fc from 'fast-check';
import { DaguError } from '@dagu-mcp/contracts';
import { parseChangeInput } from '../../apps/mcp-gateway/src/mcp/tools/change/change-input';
import { parseExecuteInput } from '../../apps/mcp-gateway/src/mcp/tools/execute/execute-input';
import { parseReadInput } from '../../apps/mcp-gateway/src/mcp/tools/read/read-input';
import { CHANGE_TOOL_FIELDS, EXECUTE_TOOL_FIELDS, READ_TOOL_FIELDS, toolArgs } from './tool-inputs';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

const parsers = [
  ['dagu_read', READ_TOOL_FIELDS, (args: unknown) => parseReadInput(args, {})],
  ['dagu_change', CHANGE_TOOL_FIELDS, (args: unknown) => parseChangeInput(args, {})],
  ['dagu_execute', EXECUTE_TOOL_FIELDS, (args: unknown) => parseExecuteInput(args, {})],
] as const;

describe.each(parsers)('%s input parser', (_name, fields, parse) => {
  test('returns a request or throws an input DaguError, never anything else', () => {
    fc.assert(
      fc.property(toolArgs(fields), (args) => {
        try {
          parse(args);
        } catch (err) {
          expect(err).toBeInstanceOf(DaguError);
          expect((err as DaguError).code).not.toBe('internal_error');
        }
      }),
      { numRuns: RUNS },
    );
  });
});
