import { createSseBlockReader, parseSseBlock } from './sse-blocks';

describe('SSE block reader fixture', () => {
  it('parses comments and events with id, data and retry', () => {
    expect(parseSseBlock(': keep-alive', 5)).toEqual({ comment: 'keep-alive', at: 5 });
    expect(parseSseBlock('id: r1\nretry: 200\ndata: ', 0)).toEqual({ id: 'r1', retry: '200', data: '', at: 0 });
  });

  it('splits blocks across chunks and wakes a waiter when its block arrives', async () => {
    const reader = createSseBlockReader({ defaultTimeoutMs: 1000 });
    const waiting = reader.next((block) => block.id === '2');
    reader.push('id: 1\ndata: {"a"');
    expect(reader.blocks).toEqual([]);
    reader.push(':1}\n\nid: 2\n');
    expect(reader.blocks.map((block) => block.data)).toEqual(['{"a":1}']);
    reader.push('data: x\n\n');
    await expect(waiting).resolves.toMatchObject({ id: '2', data: 'x' });
  });

  it('rejects a wait that times out, listing what arrived', async () => {
    const reader = createSseBlockReader({ defaultTimeoutMs: 1000 });
    reader.push(': hello\n\n');
    await expect(reader.next((block) => block.id !== undefined, 20)).rejects.toThrow(
      /within 20 ms; got .*"comment":"hello"/,
    );
  });
});
