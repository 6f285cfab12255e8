import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { checkDeleteDag, checkRenameDag, deleteIdleDag, renameDag } from '../../../actions/dag.actions';
import { assignDagProfile, checkDagProfile } from '../../../actions/profile.actions';
import type { ChangeRequest } from './change-input';
import { changeResult, dagSpecLink, roleWarnings } from './change-output';

/**
 * `rename_dag` (Dagu spec 022b): preview checks that the DAG exists, that
 * `newName` is free and that no run is active (`checkRenameDag`); apply is
 * `renameDag` (actions/dag.actions.ts). Old URIs then answer `resource_not_found`.
 *
 * @throws DaguError `resource_not_found` (the DAG), `conflict` (`newName`
 *   taken, or an active run), `unauthorized` (apply below the op's role)
 */
export async function runRenameDag(
  bus: BusClient,
  request: ChangeRequest,
  principal: Principal,
): Promise<CallToolResult> {
  const input = { name: request.name ?? '', newName: request.newName ?? '' };
  if (request.mode === 'preview') {
    await checkRenameDag(bus, principal, input);
    return changeResult(request, {
      valid: true,
      applied: false,
      fields: { dagName: input.name, dagUri: request.dagUri, newName: input.newName, newDagUri: request.newDagUri },
      warnings: roleWarnings(principal, request.type),
      links: [dagSpecLink(request.dagUri ?? '')],
    });
  }
  await renameDag(bus, principal, input);
  return changeResult(request, {
    valid: true,
    applied: true,
    fields: { dagName: input.newName, dagUri: request.newDagUri, previousName: input.name, renamed: true },
    links: [dagSpecLink(request.newDagUri ?? '')],
  });
}

/**
 * `delete_dag` (Dagu spec 022b): preview checks that the DAG exists and that
 * no run is active (`checkDeleteDag`); apply is `deleteIdleDag`: the
 * definition and its schedule go, its finished runs stay readable.
 *
 * @throws as {@link runRenameDag}
 */
export async function runDeleteDag(
  bus: BusClient,
  request: ChangeRequest,
  principal: Principal,
): Promise<CallToolResult> {
  const name = request.name ?? '';
  const fields = { dagName: name, dagUri: request.dagUri };
  if (request.mode === 'preview') {
    await checkDeleteDag(bus, principal, { name });
    return changeResult(request, {
      valid: true,
      applied: false,
      fields,
      warnings: roleWarnings(principal, request.type),
      links: [dagSpecLink(request.dagUri ?? '')],
    });
  }
  await deleteIdleDag(bus, principal, { name });
  return changeResult(request, { valid: true, applied: true, fields: { ...fields, deleted: true } });
}

/**
 * `set_dag_profile` / `clear_dag_profile` (Dagu spec 022b): the DAG's own
 * default runtime profile, kept by run-service. Preview (`checkDagProfile`)
 * checks that the DAG exists and (set) that the profile exists in the DAG's
 * workspace; apply is `assignDagProfile` and answers `profile` (null after a clear).
 *
 * @throws DaguError `resource_not_found` (DAG or profile), `unauthorized` (apply below the op's role)
 */
export async function runDagProfileChange(
  bus: BusClient,
  request: ChangeRequest,
  principal: Principal,
): Promise<CallToolResult> {
  const input = {
    dagName: request.name ?? '',
    profile: request.type === 'set_dag_profile' ? (request.profile ?? '') : null,
  };
  const fields = { dagName: input.dagName, dagUri: request.dagUri };
  const links = [dagSpecLink(request.dagUri ?? '')];
  if (request.mode === 'preview') {
    const { workspace } = await checkDagProfile(bus, principal, input);
    return changeResult(request, {
      valid: true,
      applied: false,
      fields: { ...fields, profile: input.profile, workspace },
      warnings: roleWarnings(principal, request.type),
      links,
    });
  }
  const reply = await assignDagProfile(bus, principal, input);
  return changeResult(request, { valid: true, applied: true, fields: { ...fields, profile: reply.profile }, links });
}
