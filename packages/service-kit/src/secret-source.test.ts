import { DaguError } from '@dagu-mcp/contracts';
import { createLogger } from '@dagu-mcp/runtime';
import { createSecretSource, isLoopbackDatabase } from './secret-source';

const logger = createLogger({ name: 'secret-source-test', level: 'silent' });

test('a database on this host is loopback; one elsewhere, or an unparsable URL, is not', () => {
  expect(isLoopbackDatabase('postgres://postgres@127.0.0.1:5432/test')).toBe(true);
  expect(isLoopbackDatabase('postgres://postgres@localhost/test')).toBe(true);
  expect(isLoopbackDatabase('postgres://postgres@[::1]:5432/test')).toBe(true);
  expect(isLoopbackDatabase('postgres://postgres@db.internal:5432/test')).toBe(false);
  expect(isLoopbackDatabase('postgres://postgres@10.0.0.7/test')).toBe(false);
  expect(isLoopbackDatabase('not a url')).toBe(false);
});

test('without a key ring off a developer machine, using a secret is resource_unavailable and says which service', () => {
  const source = createSecretSource({
    keyRing: undefined,
    loopback: false,
    logger,
    secrets: 'upstream credentials',
    unavailable: 'Upstream credentials are unavailable on agent-service',
  });
  let thrown: unknown;
  try {
    source();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(DaguError);
  expect(thrown).toMatchObject({ code: 'resource_unavailable' });
  expect(String((thrown as Error).message)).toMatch(/^Upstream credentials are unavailable on agent-service: /);
});
