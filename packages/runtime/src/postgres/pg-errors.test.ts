import { DaguError } from '@dagu-mcp/contracts';
import {
  classifyPgFailure,
  createStorageErrors,
  isPgOutage,
  isTransientPgFailure,
  isUniqueViolation,
  pgErrorCode,
  type PgFailureKind,
} from './pg-errors';

/** What pg (DatabaseError) and node (system errors) throw: an Error with a string `code`. */
function coded(code: string, message = `failure ${code}`): Error {
  return Object.assign(new Error(message), { code });
}

const deadlineError = (): DaguError =>
  new DaguError('resource_unavailable', 'The request deadline passed before the work was done.');
const store = createStorageErrors({ store: 'test store', deadlineError });

describe('classifyPgFailure (CONTRIBUTING §6–§7)', () => {
  const cases: Array<[string, unknown, PgFailureKind]> = [
    ['57014 query_canceled (statement_timeout from the deadline)', coded('57014'), 'deadline'],
    ['23505 unique_violation', coded('23505'), 'conflict'],
    ['40001 serialization_failure', coded('40001'), 'unavailable'],
    ['40P01 deadlock_detected', coded('40P01'), 'unavailable'],
    ['55P03 lock_not_available', coded('55P03'), 'unavailable'],
    ['08006 connection_failure (class 08)', coded('08006'), 'unavailable'],
    ['08P01 protocol_violation (class 08)', coded('08P01'), 'unavailable'],
    ['53300 too_many_connections (class 53)', coded('53300'), 'unavailable'],
    ['53100 disk_full (class 53)', coded('53100'), 'unavailable'],
    ['57P01 admin_shutdown (class 57P)', coded('57P01'), 'unavailable'],
    ['57P03 cannot_connect_now (class 57P)', coded('57P03'), 'unavailable'],
    ['57000 operator_intervention is not 57P', coded('57000'), 'other'],
    ['ECONNREFUSED', coded('ECONNREFUSED'), 'unavailable'],
    ['ECONNRESET', coded('ECONNRESET'), 'unavailable'],
    ['ETIMEDOUT', coded('ETIMEDOUT'), 'unavailable'],
    ['EPIPE', coded('EPIPE'), 'unavailable'],
    ['ENOTFOUND', coded('ENOTFOUND'), 'unavailable'],
    ['EHOSTUNREACH (was missing in run-service)', coded('EHOSTUNREACH'), 'unavailable'],
    ['EAI_AGAIN', coded('EAI_AGAIN'), 'unavailable'],
    ['pg-pool connect timeout (no code)', new Error('timeout exceeded when trying to connect'), 'unavailable'],
    ['connection terminated unexpectedly (no code)', new Error('Connection terminated unexpectedly'), 'unavailable'],
    ['Connection ended (no code)', new Error('Connection ended'), 'unavailable'],
    [
      'a query on a client whose connection failed (no code)',
      new Error('Client has encountered a connection error and is not queryable'),
      'unavailable',
    ],
    ['23503 foreign_key_violation is a bug', coded('23503'), 'other'],
    ['23514 check_violation is a bug', coded('23514'), 'other'],
    ['42601 syntax_error is a bug', coded('42601'), 'other'],
    ['42P01 undefined_table is a bug', coded('42P01'), 'other'],
    ['a 6-character code that starts like class 08', coded('080000'), 'other'],
    ['a numeric code', Object.assign(new Error('x'), { code: 8006 }), 'other'],
    ['a plain Error', new Error('boom'), 'other'],
    ['a string', 'connection terminated', 'other'],
    ['undefined', undefined, 'other'],
    ['a DaguError is never reclassified', new DaguError('conflict', 'Connection ended'), 'other'],
  ];
  it.each(cases)('%s → %s', (_name, error, kind) => {
    expect(classifyPgFailure(error)).toBe(kind);
  });

  it('answers the yes/no questions from the same table', () => {
    expect(isUniqueViolation(coded('23505'))).toBe(true);
    expect(isUniqueViolation(coded('23503'))).toBe(false);
    expect(isUniqueViolation(new DaguError('conflict', 'x'))).toBe(false);
    expect(isTransientPgFailure(coded('40P01'))).toBe(true);
    expect(isTransientPgFailure(coded('57014'))).toBe(false);
    expect(pgErrorCode(coded('23505'))).toBe('23505');
    expect(pgErrorCode({ code: 1 })).toBeUndefined();
    expect(pgErrorCode(null)).toBeUndefined();
  });
});

describe('createStorageErrors', () => {
  it('rethrows an outage as resource_unavailable naming the store', async () => {
    const error = await store.run(() => Promise.reject(coded('ECONNREFUSED'))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DaguError);
    expect(error).toMatchObject({
      code: 'resource_unavailable',
      message: 'The test store (PostgreSQL) is currently unavailable.',
      details: { dependency: 'postgresql' },
    });
  });

  it('names PostgreSQL as the dependency of an outage, not of a lock or serialization failure', () => {
    expect(isPgOutage(coded('57P01'))).toBe(true);
    expect(isPgOutage(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isPgOutage(coded('40001'))).toBe(false);
    expect(store.classify(coded('40P01'))).toMatchObject({ code: 'resource_unavailable', details: undefined });
  });

  it('rethrows a statement cut by the deadline as the deadline error', async () => {
    await expect(store.run(() => Promise.reject(coded('57014')))).rejects.toMatchObject({
      code: 'resource_unavailable',
      message: 'The request deadline passed before the work was done.',
    });
  });

  it('leaves DaguErrors, uncaught unique violations and bugs as they are', () => {
    const dagu = new DaguError('resource_not_found', 'gone');
    const unique = coded('23505');
    const bug = new TypeError('x is undefined');
    expect(store.classify(dagu)).toBe(dagu);
    expect(store.classify(unique)).toBe(unique);
    expect(store.classify(bug)).toBe(bug);
  });

  it('passes a result through', async () => {
    await expect(store.run(async () => 42)).resolves.toBe(42);
  });
});
