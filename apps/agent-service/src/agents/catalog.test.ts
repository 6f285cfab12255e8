import type { AgentBinding, StoredBinding } from '@dagu-mcp/contracts';
import { mergeCatalog } from './catalog';

const alice = { id: 'user:a', subject: 'alice' };
const bob = { id: 'user:b', subject: 'bob' };
const read: AgentBinding = { kind: 'dagu_tool', tool: 'dagu_read', restrictions: { targets: ['dag'] } };
const refund: AgentBinding = { kind: 'dag', dag: 'refund' };

describe('mergeCatalog', () => {
  it('names tools by binding, and authors new bindings by the saver', () => {
    const merged = mergeCatalog([], [read, refund], alice, 't1');
    expect(merged.map((b) => [b.toolName, b.createdBy.subject, b.createdAt])).toEqual([
      ['dagu_read', 'alice', 't1'],
      ['refund', 'alice', 't1'],
    ]);
  });

  it('keeps the author of an unchanged binding and re-authors a changed one', () => {
    const before: StoredBinding[] = mergeCatalog([], [read, refund], alice, 't1');
    const changed: AgentBinding = { ...refund, waitSeconds: 5 };
    const merged = mergeCatalog(before, [{ ...read, restrictions: { targets: ['dag'] } }, changed], bob, 't2');
    expect(merged.map((b) => b.createdBy.subject)).toEqual(['alice', 'bob']);
  });

  it('refuses two bindings with one tool name, naming the later one', () => {
    expect(() =>
      mergeCatalog(
        [],
        [refund, { kind: 'dagu_tool', tool: 'dagu_read', name: 'refund', restrictions: {} }],
        alice,
        't',
      ),
    ).toThrow(expect.objectContaining({ code: 'conflict', field: 'tools[1].name' }) as Error);
  });
});
