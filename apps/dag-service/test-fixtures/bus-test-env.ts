/**
 * Redis helpers of the dag-service bus test (CONTRIBUTING §10: a queue prefix
 * of its own per test file, cleaned up afterwards). The shared pieces come
 * from the bus package's own test fixtures.
 */
export {
  TEST_REDIS_URL,
  deleteKeysWithPrefix,
  randomPrefix as randomBusPrefix,
} from '../../../packages/bus/test-fixtures/bus-test-env';

/** The error a promise rejects with; fails the test when it resolves. */
export async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error: unknown) {
    return error;
  }
  throw new Error('Expected the call to fail, but it succeeded.');
}
