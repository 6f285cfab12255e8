/**
 * Arbitraries of tool arguments and REST bodies for the input properties
 * (issue 18 "property tests at scale"): objects whose keys are mostly the
 * tool's own fields (so validation goes deep) with values that are mostly
 * plausible (targets, actions, names, URIs) and sometimes any JSON, plus
 * non-objects now and then.
 */
import fc from 'fast-check';
import { CHANGE_INPUT_FIELDS } from '../../apps/mcp-gateway/src/mcp/tools/change/change-input';
import { EXECUTE_FIELDS } from '../../apps/mcp-gateway/src/mcp/tools/execute/execute-input';
import { TARGET_MODE_FIELDS } from '../../apps/mcp-gateway/src/mcp/tools/read/read-targets';

const anyJson = fc.jsonValue({ maxDepth: 2 });

/** Plausible strings for any field: names, targets, actions, modes, URIs, odd text. */
const plausible = fc.oneof(
  fc.constantFrom(
    'dags',
    'dag',
    'runs',
    'run',
    'wiki',
    'wiki_page',
    'run_logs',
    'step_log',
    'reference',
    'start',
    'enqueue',
    'stop',
    'retry',
    'apply',
    'preview',
    'upsert_dag',
    'dagu://dags/x',
    'dagu://runs/x/latest',
    'dagu://wiki/default/a',
    'latest',
    'default',
    'prop-dag',
    'steps:\n  - run: echo hi\n',
  ),
  fc.stringMatching(/^[a-z][a-z0-9_.-]{0,12}$/),
  fc.string({ maxLength: 40 }),
);
const fieldValue = fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 1, arbitrary: anyJson });

/** Arguments of a tool whose fields are `fields`: mostly objects of those fields, sometimes anything. */
export function toolArgs(fields: readonly string[]): fc.Arbitrary<unknown> {
  const known = fc.dictionary(fc.constantFrom(...fields), fieldValue, { maxKeys: 5 });
  const withUnknown = fc.dictionary(fc.oneof(fc.constantFrom(...fields), fc.string({ maxLength: 8 })), fieldValue, {
    maxKeys: 4,
  });
  return fc.oneof(
    { weight: 8, arbitrary: known },
    { weight: 1, arbitrary: withUnknown },
    { weight: 1, arbitrary: anyJson },
  );
}

// The fields each tool's parser accepts, taken from the parsers themselves so the two cannot drift.
export const READ_TOOL_FIELDS = ['uri', ...TARGET_MODE_FIELDS] as const;
export const CHANGE_TOOL_FIELDS = CHANGE_INPUT_FIELDS;
export const EXECUTE_TOOL_FIELDS = EXECUTE_FIELDS;

/** A REST body: mostly an object of the route's fields, sometimes any JSON. */
export function restBody(fields: readonly string[]): fc.Arbitrary<unknown> {
  return toolArgs(fields);
}
