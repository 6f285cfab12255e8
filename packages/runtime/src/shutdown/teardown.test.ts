import { runTeardown, TeardownError } from './teardown';

describe('runTeardown', () => {
  it('runs every step in order, past failures, and reports the first failure at the end', async () => {
    const ran: string[] = [];
    const seen: string[] = [];
    const failing = runTeardown(
      [
        ['server', () => void ran.push('server')],
        [
          'bus',
          async () => {
            ran.push('bus');
            throw new Error('bus would not close');
          },
        ],
        [
          'redis',
          () => {
            ran.push('redis');
            throw new Error('redis too');
          },
        ],
        ['pool', async () => void ran.push('pool')],
      ],
      (step) => seen.push(step),
    );
    await expect(failing).rejects.toThrow(TeardownError);
    await failing.catch((err: unknown) => {
      expect(err).toMatchObject({ step: 'bus', failures: 2, message: 'teardown step bus failed (and 1 more)' });
      expect((err as Error).cause).toEqual(new Error('bus would not close'));
    });
    expect(ran).toEqual(['server', 'bus', 'redis', 'pool']);
    expect(seen).toEqual(['bus', 'redis']);
  });

  it('resolves when every step closes', async () => {
    await expect(runTeardown([['a', () => undefined]])).resolves.toBeUndefined();
  });
});
