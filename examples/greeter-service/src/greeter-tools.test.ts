import { ExtensionToolError, type ExtensionCallContext } from '@dagu-mcp/service-kit';
import { DEFAULT_GREETING, greeterTools } from './greeter-tools';

const ctx = (signal = new AbortController().signal): ExtensionCallContext => ({
  principal: { id: 'u1', subject: 'ada', role: 'viewer', credentialType: 'token' },
  deadline: Date.now() + 5000,
  signal,
  sessionId: 's1',
  notify: async () => undefined,
  progress: async () => undefined,
});

describe('greeter tools', () => {
  test('hello greets with the current greeting and names the caller', async () => {
    const [hello] = greeterTools({ greeting: DEFAULT_GREETING });
    await expect(hello?.handle({ name: 'Grace' }, ctx())).resolves.toEqual({
      greeting: 'Hello, Grace!',
      greetedBy: 'ada',
    });
  });

  test('set_greeting changes what hello says, and refuses a greeting without {name}', async () => {
    const state = { greeting: DEFAULT_GREETING };
    const [hello, setGreeting] = greeterTools(state);
    await setGreeting?.handle({ greeting: 'Hi {name}' }, ctx());
    await expect(hello?.handle({ name: 'Lin' }, ctx())).resolves.toMatchObject({ greeting: 'Hi Lin' });
    await expect(setGreeting?.handle({ greeting: 'Hi' }, ctx())).rejects.toBeInstanceOf(ExtensionToolError);
  });

  test('hello stops working when the call is cancelled', async () => {
    const [hello] = greeterTools({ greeting: DEFAULT_GREETING });
    const abort = new AbortController();
    const call = hello?.handle({ name: 'x', delayMs: 10_000 }, ctx(abort.signal));
    abort.abort();
    await expect(call).rejects.toThrow('cancelled');
  });

  test('declares a viewer tool and an operator tool with flat input schemas', () => {
    const tools = greeterTools({ greeting: DEFAULT_GREETING });
    expect(tools.map((t) => [t.name, t.minRole, t.inputSchema.type])).toEqual([
      ['hello', 'viewer', 'object'],
      ['set_greeting', 'operator', 'object'],
    ]);
  });
});
