import { getPrompt, hasPrompt, listPrompts } from './prompt-catalog';
import { JsonRpcError } from '../transport/protocol';

describe('prompts (dagu-model §8)', () => {
  test('prompts/list has the five prompts with titles, descriptions and required arguments', () => {
    const prompts = listPrompts();
    expect(prompts.map((p) => [p.name, p.arguments?.map((a) => a.name)])).toEqual([
      ['dagu_create_dag', ['goal']],
      ['dagu_edit_dag', ['name', 'change']],
      ['dagu_create_wiki_page', ['workspace', 'path', 'goal']],
      ['dagu_edit_wiki_page', ['workspace', 'path', 'change']],
      ['dagu_debug_failed_run', ['name', 'dagRunId']],
    ]);
    for (const p of prompts) {
      expect(p.title).toBeTruthy();
      expect(p.description).toBeTruthy();
      expect(p.arguments?.every((a) => a.required === true && a.description)).toBe(true);
    }
    expect(hasPrompt('dagu_edit_dag')).toBe(true);
    expect(hasPrompt('toString')).toBe(false);
  });

  test('prompts/get renders one user-role text message that names the tool calls', () => {
    const result = getPrompt('dagu_debug_failed_run', { name: 'nightly', dagRunId: ' r-1 ' });
    expect(result.messages).toHaveLength(1);
    const message = result.messages[0];
    expect(message?.role).toBe('user');
    const text = message?.content.type === 'text' ? message.content.text : '';
    expect(text).toContain('"dagRunId":"r-1"');
    expect(text).toContain('dagu_read');
    expect(text).toContain('dagu_execute');
    expect(getPrompt('dagu_create_dag', { goal: 'back up the db' }).messages[0]?.content).toMatchObject({
      type: 'text',
      text: expect.stringContaining('dagu_change'),
    });
  });

  test.each([
    ['nope', {}, 'name'],
    ['dagu_create_dag', {}, 'goal'],
    ['dagu_create_dag', { goal: '   ' }, 'goal'],
    ['dagu_create_dag', { goal: 'x', extra: 'y' }, 'extra'],
    ['dagu_edit_dag', { name: 'bad name!', change: 'x' }, 'name'],
    ['dagu_edit_dag', { name: 'a'.repeat(41), change: 'x' }, 'name'],
    ['dagu_debug_failed_run', { name: 'ok', dagRunId: 'bad/id' }, 'dagRunId'],
    ['dagu_create_wiki_page', { workspace: 'all', path: 'a', goal: 'x' }, 'workspace'],
    ['dagu_edit_wiki_page', { workspace: 'ops', path: '../etc', change: 'x' }, 'path'],
  ])('%s %j → -32602 on field %s', (name, args, field) => {
    let error: unknown;
    try {
      getPrompt(name, args);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error).toMatchObject({
      code: -32602,
      data: { code: 'invalid_request', operation: 'prompts/get', details: { field } },
    });
  });
});
