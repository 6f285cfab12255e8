import { DaguError, dagOps, isValidDagName, type Principal } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { prescanYaml } from '@dagu-mcp/dag-spec';

/** A DAG spec refused at the gateway: what dag-service would have answered for it. */
export interface EdgeRefusal {
  /** One error, `invalid YAML: <the bound passed, and where>` (dagu-model §4). */
  readonly errors: string[];
  /** Where it points: line and column of the place the bound was passed. */
  readonly errorLocations: { index: number; line: number; column: number }[];
  /** Whether a DAG of that name is stored (what an invalid preview links to). */
  readonly stored: boolean;
}

/**
 * Checks a DAG spec against the pre-scan's bounds (bytes, nesting depth, values; dag-spec
 * `prescanYaml`) before it leaves the gateway. A spec past them is
 * answered here, as dag-service would answer it, without carrying up to a few MB through
 * Redis to a service that refuses it anyway: the nesting attack costs one linear scan that
 * stops at the first bound passed, and no other caller's request waits behind it. A spec
 * within the bounds, or a name dag-service would refuse first, goes on to dag-service.
 *
 * @returns the refusal (`stored` looked up with `dag.get`), or undefined to go on
 * @throws DaguError `resource_unavailable` when dag-service cannot say whether the DAG is stored
 */
export async function refusedAtEdge(
  bus: BusClient,
  principal: Principal,
  input: { name: string; spec: string },
): Promise<EdgeRefusal | undefined> {
  if (!isValidDagName(input.name)) return undefined;
  const problem = prescanYaml(input.spec);
  if (problem === undefined) return undefined;
  return {
    errors: [`invalid YAML: ${problem.message}`],
    errorLocations: [{ index: 0, line: problem.line, column: problem.column }],
    stored: await isStored(bus, principal, input.name),
  };
}

/** Whether dag-service stores a DAG `name` (a `dag.get` that is not `resource_not_found`). */
async function isStored(bus: BusClient, principal: Principal, name: string): Promise<boolean> {
  try {
    await bus.call('dag', dagOps, 'dag.get', { name }, { principal });
    return true;
  } catch (err) {
    if (err instanceof DaguError && err.code === 'resource_not_found') return false;
    throw err;
  }
}
