import {
  bindingToolName,
  DaguError,
  type AgentBinding,
  type BindingAuthor,
  type StoredBinding,
} from '@dagu-mcp/contracts';

/** A binding's content without what the store adds, as a stable string (key order fixed by sorting). */
function contentKey(binding: AgentBinding): string {
  return JSON.stringify(binding, (_key, value: unknown) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}

/** The binding part of a stored binding. */
function bindingOf(stored: StoredBinding): AgentBinding {
  const { toolName: _t, createdBy: _c, createdAt: _a, ...binding } = stored;
  return binding;
}

/**
 * The catalog that replaces `previous` with `next`:
 * each binding gets its tool name (`bindingToolName`); a binding identical to
 * one already stored keeps its `createdBy` and `createdAt` (re-saving a
 * catalog does not move a binding's authority to the saver), every other one
 * is authored by `author` now. What an agent may do through a binding is
 * bounded by its author's current role, so a changed binding is always
 * bounded by the person who changed it.
 *
 * @throws DaguError `conflict` (field `tools[i].name`) when two bindings publish the same tool name
 */
export function mergeCatalog(
  previous: readonly StoredBinding[],
  next: readonly AgentBinding[],
  author: BindingAuthor,
  now: string,
): StoredBinding[] {
  const kept = new Map<string, StoredBinding>();
  for (const stored of previous) kept.set(contentKey(bindingOf(stored)), stored);
  const seen = new Map<string, number>();
  return next.map((binding, index) => {
    const toolName = bindingToolName(binding);
    const first = seen.get(toolName);
    if (first !== undefined) {
      throw new DaguError(
        'conflict',
        `tools[${index}]: the tool name ${toolName} is already used by tools[${first}]; give one of them another "name".`,
        { field: `tools[${index}].name`, details: { toolName } },
      );
    }
    seen.set(toolName, index);
    const old = kept.get(contentKey(binding));
    return {
      ...binding,
      toolName,
      createdBy: old?.createdBy ?? author,
      createdAt: old?.createdAt ?? now,
    };
  });
}
