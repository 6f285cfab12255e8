import { endpointOf, isPgStartWait, waitForDependency } from './dependency-wait';
import { createLogger } from '../logging/logger';

const logger = createLogger({ name: 'test', level: 'silent', pretty: false });
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });

describe('waitForDependency', () => {
  it('retries a "not there yet" failure until the attempt succeeds', async () => {
    let calls = 0;
    const result = await waitForDependency({
      dependency: 'PostgreSQL',
      target: '127.0.0.1:1',
      attempt: async () => (++calls < 3 ? Promise.reject(refused) : 'ok'),
      isUnavailable: isPgStartWait,
      waitMs: 5000,
      logger,
      delayMs: () => 5,
    });
    expect(result).toBe('ok');
    expect(calls).toBe(3);
  });

  it('gives up after waitMs with the target and the reason, and rethrows another failure at once', async () => {
    const attempt = (): Promise<never> => Promise.reject(refused);
    await expect(
      waitForDependency({
        dependency: 'PostgreSQL',
        target: 'db:5432',
        attempt,
        isUnavailable: isPgStartWait,
        waitMs: 50,
        logger,
        delayMs: () => 10,
      }),
    ).rejects.toThrow('PostgreSQL at db:5432 did not answer within 0.05 s (DEPENDENCY_WAIT_MS): connect ECONNREFUSED');
    const auth = Object.assign(new Error('password authentication failed'), { code: '28P01' });
    let calls = 0;
    await expect(
      waitForDependency({
        dependency: 'PostgreSQL',
        target: 'db:5432',
        attempt: () => (calls++, Promise.reject(auth)),
        isUnavailable: isPgStartWait,
        waitMs: 5000,
        logger,
      }),
    ).rejects.toBe(auth);
    expect(calls).toBe(1);
  });

  it('names host:port without the credentials', () => {
    expect(endpointOf('postgres://u:secret@db.local/x', 5432)).toBe('db.local:5432');
    expect(endpointOf('redis://:pw@127.0.0.1:6380', 6379)).toBe('127.0.0.1:6380');
  });
});
