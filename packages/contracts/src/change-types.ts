/** The eight change types of `dagu_change` (Dagu spec 022b §Input), `upsert_dag` the default. */
export const CHANGE_TYPES = [
  'upsert_dag',
  'rename_dag',
  'delete_dag',
  'set_dag_profile',
  'clear_dag_profile',
  'upsert_wiki_page',
  'rename_wiki_page',
  'delete_wiki_page',
] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];
