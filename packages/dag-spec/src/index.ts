/**
 * `@dagu-mcp/dag-spec`: validation and normalization of Dagu DAG YAML
 * (dagu-model.md §2–4), and the graph helpers the engine needs.
 *
 * ```ts
 * const result = parseDagSpec(spec, { name: 'nightly-report' });
 * if (!result.valid) return result.errors;          // dagu_change `errors` (spec 022)
 * const order = topologicalOrder(result.dag!);      // execution order of steps
 * ```
 *
 * Choices made where the spec leaves room (each one is documented where it
 * is implemented):
 * - the tool's `name` is the DAG's name; a differing YAML `name` is kept as
 *   `yamlName`; without a tool name the YAML `name` is required;
 * - `type` defaults to `graph`; `depends` in a `chain` DAG is an error;
 * - a step's `run: <dag-name>` together with a step `params:` is the pre-`call:`
 *   legacy sub-DAG call, normalized to `dag.run`;
 * - bare words in a params string (or string list item) are positional params
 *   named `1`, `2`, …; a list item that is a map with a `name` key is a typed
 *   param declaration;
 * - human.task is allowed in the top-level steps of the root DAG and of local
 *   sub-DAGs, not inside foreach and not in `handler_on`;
 * - without `foreach.key`, scalar items are their own keys (must be unique);
 * - `foreach.collect` (a Dagu extension) is accepted and kept for the engine;
 * - `queue` must be a queue name: the object form with worker labels is
 *   refused as not supported here;
 * - dependency cycles are validation errors (Dagu finds them only at run time);
 * - `dag` / `subDags` are returned only when the stream is valid.
 */
export { parseDagSpec, type ParseDagSpecOptions } from './parse-dag-spec';
export { DEFAULT_EXPANSION_LIMITS, type ExpansionLimits } from './yaml-bounds';
export { DEFAULT_YAML_TEXT_BOUNDS, prescanYaml, type YamlTextBounds, type YamlTextProblem } from './yaml-prescan';
export { topologicalOrder, findCycles, upstreamOf, rewindSet } from './dependencies';
export { checkDagName } from './dag.parser';
export { checkCron } from './schedule.parser';
export { SUPPORTED_ACTIONS } from './step-action.parser';
export { MAX_FOREACH_ITEMS } from './foreach.parser';
export { RESERVED_IDS, STEP_ID } from './step.parser';
export { isReservedValueName, reservedNameMessage } from './reserved-names';
export { findReferenceWarnings } from './reference-warnings';
export { suggestNames, didYouMeanSuffix, MAX_SUGGESTIONS, MIN_SUBSTRING_LENGTH } from './suggest-names';
export * from './dag.types';
export { locateErrors, type ErrorLocation } from './error-locations';
