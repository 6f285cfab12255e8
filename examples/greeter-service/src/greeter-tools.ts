import { ExtensionToolError, type ExtensionToolDefinition } from '@dagu-mcp/service-kit';

/** The greeting the service uses until an operator changes it (`{name}` is replaced). */
export const DEFAULT_GREETING = 'Hello, {name}!';

/** The state of one replica of the service (an example: a real service keeps it in its own schema). */
export interface GreeterState {
  greeting: string;
}

/**
 * The two tools of the worked example (docs/extending.md), served by the gateway as
 * `greeter.hello` and `greeter.set_greeting`:
 * - `hello` (any role): greets `name`, optionally after `delayMs` of work (to show deadlines);
 * - `set_greeting` (operator or higher): changes the greeting; refuses one without `{name}`.
 */
export function greeterTools(state: GreeterState): ExtensionToolDefinition[] {
  return [
    {
      name: 'hello',
      title: 'Say hello',
      description: 'Greets someone by name with the current greeting.',
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 100, description: 'Who to greet.' },
          delayMs: {
            type: 'integer',
            minimum: 0,
            maximum: 60000,
            description: 'Pretend to work this long first, ms (default 0).',
          },
        },
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
      minRole: 'viewer',
      async handle(args, ctx) {
        const delayMs = typeof args.delayMs === 'number' ? args.delayMs : 0;
        if (delayMs > 0) await sleep(delayMs, ctx.signal);
        const name = String(args.name);
        await ctx.progress(1, 1, 'greeted');
        return { greeting: state.greeting.replace('{name}', name), greetedBy: ctx.principal.subject };
      },
    },
    {
      name: 'set_greeting',
      title: 'Change the greeting',
      description: 'Sets the greeting hello uses; it must contain {name}.',
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['greeting'],
        properties: { greeting: { type: 'string', minLength: 1, maxLength: 200, description: 'e.g. "Hi {name}"' } },
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      minRole: 'operator',
      async handle(args) {
        const greeting = String(args.greeting);
        if (!greeting.includes('{name}')) throw new ExtensionToolError('The greeting must contain {name}.');
        state.greeting = greeting;
        return { greeting };
      },
    },
  ];
}

/** Waits `ms`, or rejects when `signal` aborts (caller cancelled, deadline passed). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new Error('The call was cancelled or ran past its deadline.'));
      },
      { once: true },
    );
  });
}
