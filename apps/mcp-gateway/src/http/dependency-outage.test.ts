import { DaguError } from '@dagu-mcp/contracts';
import { outageErrorOf, outageOf } from './dependency-outage';

function coded(code: string, message = 'failed'): Error {
  return Object.assign(new Error(message), { code });
}

describe('outageOf', () => {
  it('names Redis for the ioredis failures of an unreachable server', () => {
    const maxRetries = Object.assign(new Error('Reached the max retries per request limit (which is 2).'), {
      name: 'MaxRetriesPerRequestError',
    });
    expect(outageOf(maxRetries)).toBe('redis');
    expect(outageOf(new Error('Connection is closed.'))).toBe('redis');
    expect(outageOf(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe('redis');
  });

  it('names PostgreSQL for pg and socket failures, not for lock contention', () => {
    expect(outageOf(coded('57P01', 'terminating connection due to administrator command'))).toBe('postgresql');
    expect(outageOf(new Error('Connection terminated unexpectedly'))).toBe('postgresql');
    expect(outageOf(coded('40P01'))).toBeUndefined();
  });

  it('leaves bugs and domain errors alone', () => {
    expect(outageOf(new TypeError('x is undefined'))).toBeUndefined();
    expect(outageOf(new DaguError('conflict', 'Connection is closed.'))).toBeUndefined();
  });

  it('turns an outage into resource_unavailable with details.dependency', () => {
    expect(outageErrorOf(new Error('Connection is closed.'))?.toServiceError()).toEqual({
      code: 'resource_unavailable',
      message: 'Redis is unavailable; try again shortly.',
      details: { dependency: 'redis' },
    });
  });
});
