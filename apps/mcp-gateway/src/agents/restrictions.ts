import { DaguError, type DaguToolRestrictions } from '@dagu-mcp/contracts';
import { parseChangeInput } from '../mcp/tools/change/change-input';
import { parseExecuteInput } from '../mcp/tools/execute/execute-input';
import { parseReadInput } from '../mcp/tools/read/read-input';
import { DAG_NAMED_TARGETS } from '../mcp/tools/read/read-targets';

/** The labels of a DAG, or `undefined` when there is no such DAG (a bus read as the calling agent). */
export type DagLabelsOf = (dagName: string) => Promise<readonly string[] | undefined>;

/** Read targets that list or search over every DAG or run: no name to check, so refused under a DAG restriction. */
const DAG_WIDE_TARGETS = new Set(['dags', 'runs', 'dag_search']);
const WIKI_TARGETS = new Set(['wiki', 'wiki_page', 'wiki_search']);

/** `unauthorized` naming the restriction that refused. */
function refused(restriction: keyof DaguToolRestrictions, message: string, allowed: readonly string[]): DaguError {
  return new DaguError('unauthorized', `${message} (restriction ${restriction}: ${allowed.join(', ')}).`, {
    details: { restriction, allowed: [...allowed] },
  });
}

/** True when a DAG label matches a selector: `key=value` exactly, or a bare `key` as `key` or any `key=…`. */
export function labelMatches(selector: string, label: string): boolean {
  if (selector.includes('=')) return label === selector;
  return label === selector || label.startsWith(`${selector}=`);
}

/** @returns the refusal, or undefined when the DAG `name` is allowed by `dags`/`dagLabels` */
async function checkDag(name: string, r: DaguToolRestrictions, labelsOf: DagLabelsOf): Promise<DaguError | undefined> {
  if (r.dags === undefined && r.dagLabels === undefined) return undefined;
  if (r.dags?.includes(name) === true) return undefined;
  if (r.dagLabels !== undefined) {
    const labels = (await labelsOf(name)) ?? [];
    if (r.dagLabels.some((s) => labels.some((l) => labelMatches(s, l)))) return undefined;
    if (r.dags === undefined) return refused('dagLabels', `This tool may not touch DAG ${name}`, r.dagLabels);
  }
  return refused('dags', `This tool may not touch DAG ${name}`, r.dags ?? []);
}

/** A DAG restriction is set: the tool only touches DAGs it can name. */
const dagRestricted = (r: DaguToolRestrictions): boolean => r.dags !== undefined || r.dagLabels !== undefined;

/**
 * Checks one call of a narrowed `dagu_read` against its restrictions
 *: `targets`; a DAG-named target's `name` against
 * `dags`/`dagLabels` (list and search targets over every DAG are refused
 * while a DAG restriction is set); a wiki target's `workspace` against
 * `wikiWorkspaces` (`all` or none is refused while it is set).
 *
 * Arguments the tool itself refuses pass through unchecked, so the caller
 * gets the tool's own `invalid_tool_input`.
 *
 * @returns the `unauthorized` refusal, or undefined when allowed
 */
export async function checkRead(
  args: unknown,
  r: DaguToolRestrictions,
  labelsOf: DagLabelsOf,
): Promise<DaguError | undefined> {
  let request;
  try {
    request = parseReadInput(args, {});
  } catch {
    return undefined;
  }
  const { target, fields } = request;
  if (r.targets !== undefined && !r.targets.includes(target))
    return refused('targets', `This tool may not read target ${target}`, r.targets);
  if (DAG_WIDE_TARGETS.has(target) && dagRestricted(r)) {
    return refused(
      r.dags !== undefined ? 'dags' : 'dagLabels',
      `This tool reads only named DAGs, so target ${target} is refused`,
      r.dags ?? r.dagLabels ?? [],
    );
  }
  if (DAG_NAMED_TARGETS.has(target) && fields.name !== undefined) return checkDag(fields.name, r, labelsOf);
  if (WIKI_TARGETS.has(target) && r.wikiWorkspaces !== undefined) {
    const workspace = fields.workspace ?? 'all';
    if (!r.wikiWorkspaces.includes(workspace))
      return refused('wikiWorkspaces', `This tool may not read wiki workspace ${workspace}`, r.wikiWorkspaces);
  }
  return undefined;
}

/**
 * Checks one call of a narrowed `dagu_change`: `changeModes`, `changeTypes`,
 * and the DAG's name against `dags`/`dagLabels` (labels of the DAG as stored:
 * a DAG not yet stored matches no selector).
 */
export async function checkChange(
  args: unknown,
  r: DaguToolRestrictions,
  labelsOf: DagLabelsOf,
): Promise<DaguError | undefined> {
  let request;
  try {
    request = parseChangeInput(args, {});
  } catch {
    return undefined;
  }
  if (r.changeModes !== undefined && !r.changeModes.includes(request.mode))
    return refused('changeModes', `This tool may not change DAGs in mode ${request.mode}`, r.changeModes);
  if (r.changeTypes !== undefined && !r.changeTypes.includes(request.type))
    return refused('changeTypes', `This tool may not make changes of type ${request.type}`, r.changeTypes);
  // Wiki change types (Dagu spec 022b) name a workspace, not a DAG.
  if (request.workspace !== undefined) {
    if (r.wikiWorkspaces !== undefined && !r.wikiWorkspaces.includes(request.workspace))
      return refused(
        'wikiWorkspaces',
        `This tool may not change wiki workspace ${request.workspace}`,
        r.wikiWorkspaces,
      );
    return undefined;
  }
  const denied = await checkDag(request.name ?? '', r, labelsOf);
  // A rename must stay inside what the tool may touch on both ends.
  if (denied !== undefined || request.newName === undefined) return denied;
  return checkDag(request.newName, r, labelsOf);
}

/**
 * Checks one call of a narrowed `dagu_execute`: `actions`, and the DAG's
 * name against `dags`/`dagLabels`; an `inline_spec` start (YAML the agent
 * supplies) is refused while a DAG restriction is set.
 */
export async function checkExecute(
  args: unknown,
  r: DaguToolRestrictions,
  labelsOf: DagLabelsOf,
): Promise<DaguError | undefined> {
  let request;
  try {
    request = parseExecuteInput(args, {});
  } catch {
    return undefined;
  }
  if (r.actions !== undefined && !r.actions.includes(request.action))
    return refused('actions', `This tool may not ${request.action} runs`, r.actions);
  if (request.targetType === 'inline_spec' && dagRestricted(r))
    return refused(
      r.dags !== undefined ? 'dags' : 'dagLabels',
      'This tool may not run inline YAML',
      r.dags ?? r.dagLabels ?? [],
    );
  return checkDag(request.name, r, labelsOf);
}

/**
 * The sentence a narrowed tool's description ends with, stating its
 * restrictions ("the tool's published description states
 * its restrictions"); empty when none.
 */
export function describeRestrictions(r: DaguToolRestrictions): string {
  const parts: string[] = [];
  if (r.targets !== undefined) parts.push(`read targets: ${r.targets.join(', ')}`);
  if (r.changeModes !== undefined) parts.push(`change modes: ${r.changeModes.join(', ')}`);
  if (r.changeTypes !== undefined) parts.push(`change types: ${r.changeTypes.join(', ')}`);
  if (r.actions !== undefined) parts.push(`actions: ${r.actions.join(', ')}`);
  if (r.dags !== undefined) parts.push(`DAGs: ${r.dags.join(', ')}`);
  if (r.dagLabels !== undefined) parts.push(`DAGs labelled: ${r.dagLabels.join(', ')}`);
  if (r.wikiWorkspaces !== undefined) parts.push(`wiki workspaces: ${r.wikiWorkspaces.join(', ')}`);
  return parts.length === 0 ? '' : ` Restricted to ${parts.join('; ')}.`;
}
