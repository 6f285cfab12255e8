import { DaguError } from '../src/errors';

/**
 * The `DaguError` a promise rejects with: the tests' one way to capture a service's or a
 * tool's refusal and look at its code, field and details.
 *
 * @throws the rejection itself when it is not a DaguError; Error when the promise resolves
 */
export async function daguErrorOf(promise: Promise<unknown>): Promise<DaguError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DaguError) return error;
    throw error;
  }
  throw new Error('expected a DaguError');
}

/**
 * The `DaguError` a call throws, as {@link daguErrorOf} for synchronous code.
 *
 * @throws what `fn` throws when it is not a DaguError; Error when it returns
 */
export function caughtDaguError(fn: () => unknown): DaguError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DaguError) return error;
    throw error;
  }
  throw new Error('expected a DaguError');
}
