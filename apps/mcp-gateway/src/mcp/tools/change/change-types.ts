/**
 * The change types of `dagu_change` and the fields each uses (Dagu spec
 * 022b §Input table), required fields in table order. `mode` and `type` go
 * with every type and are not listed.
 */

import type { ChangeType, OpName } from '@dagu-mcp/contracts';

/** The eight change types (022b §Input), `upsert_dag` the default; one list, in the contracts. */
export { CHANGE_TYPES, type ChangeType } from '@dagu-mcp/contracts';

/** A field of the flat input besides `mode` and `type`. */
export type ChangeField =
  'mode' | 'type' | 'name' | 'spec' | 'newName' | 'profile' | 'workspace' | 'path' | 'content' | 'newPath';

/** The fields each type requires (and the only ones it accepts besides `mode`, `type`). */
export const FIELDS_OF_TYPE: Readonly<Record<ChangeType, readonly ChangeField[]>> = {
  upsert_dag: ['name', 'spec'],
  rename_dag: ['name', 'newName'],
  delete_dag: ['name'],
  set_dag_profile: ['name', 'profile'],
  clear_dag_profile: ['name'],
  upsert_wiki_page: ['workspace', 'path', 'content'],
  rename_wiki_page: ['workspace', 'path', 'newPath'],
  delete_wiki_page: ['workspace', 'path'],
};

/**
 * The op each type's apply makes (its role is the op's, in the contracts'
 * catalogs: dagu-model §9), read by the preview's role warning (022b).
 */
export const APPLY_OP_OF_TYPE: Readonly<Record<ChangeType, OpName>> = {
  upsert_dag: 'dag.upsert',
  rename_dag: 'dag.rename',
  delete_dag: 'dag.delete',
  set_dag_profile: 'profile.assign',
  clear_dag_profile: 'profile.assign',
  upsert_wiki_page: 'wiki.put',
  rename_wiki_page: 'wiki.rename',
  delete_wiki_page: 'wiki.delete',
};

/** Wiki types: their errors and outputs carry `workspace`, `path`, `pageUri` instead of `dagName`, `dagUri`. */
export const WIKI_TYPES: ReadonlySet<ChangeType> = new Set([
  'upsert_wiki_page',
  'rename_wiki_page',
  'delete_wiki_page',
]);

/** A runtime profile name (022b §Input): `^[a-z0-9][a-z0-9._-]*$`, at most 40 characters. */
export const PROFILE_NAME = /^[a-z0-9][a-z0-9._-]*$/;
