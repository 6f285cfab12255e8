import { checkApprovalInput, checkFormValues, checkRejectionInput } from './form-values';

const FORM = {
  type: 'object',
  properties: {
    environment: { type: 'string', enum: ['staging', 'production'] },
    count: { type: 'integer', minimum: 1 },
    notify: { type: 'boolean' },
    note: { type: 'string', default: '' },
  },
  required: ['environment'],
};

describe('checkFormValues (human.task form)', () => {
  test('valid values become string outputs; defaults fill missing fields', () => {
    expect(checkFormValues(FORM, { environment: 'staging', count: 2, notify: true })).toEqual({
      ok: true,
      outputs: { environment: 'staging', count: '2', notify: 'true', note: '' },
    });
  });
  test('required, enum, type and minimum are checked', () => {
    const check = checkFormValues(FORM, { count: 0, notify: 'yes' });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.errors).toEqual(
      expect.arrayContaining(['environment is required', 'count must be at least 1', 'notify must be a boolean']),
    );
    expect(checkFormValues(FORM, { environment: 'dev' })).toMatchObject({
      ok: false,
      errors: ['environment must be one of "staging", "production"'],
    });
  });
  test('no form: any scalar values; objects are refused', () => {
    expect(checkFormValues(undefined, { a: 'x', b: 1 })).toEqual({ ok: true, outputs: { a: 'x', b: '1' } });
    expect(checkFormValues(undefined, { a: { nested: true } }).ok).toBe(false);
  });
  test('additionalProperties false refuses unknown fields', () => {
    expect(checkFormValues({ properties: {}, additionalProperties: false }, { x: '1' })).toMatchObject({ ok: false });
  });
});

describe('checkApprovalInput', () => {
  test('required inputs must be non-empty; undeclared names are refused', () => {
    expect(checkApprovalInput(['FEEDBACK', 'NOTES'], ['FEEDBACK'], { FEEDBACK: 'ok' })).toEqual({
      ok: true,
      outputs: { FEEDBACK: 'ok' },
    });
    expect(checkApprovalInput(['FEEDBACK'], ['FEEDBACK'], {})).toMatchObject({
      ok: false,
      errors: ['FEEDBACK is required'],
    });
    expect(checkApprovalInput(['FEEDBACK'], [], { OTHER: 'x' })).toMatchObject({ ok: false });
  });
});

describe('reserved names (dagu-model §3)', () => {
  test('no human-task value, approval or rejection input may set PATH, LD_*, DAG_* …, with or without a form', () => {
    for (const name of ['PATH', 'BASH_ENV', 'LD_PRELOAD', 'DAG_RUN_ID', 'DAGU_OUTPUT_FILE']) {
      expect(checkFormValues(undefined, { [name]: 'x' })).toMatchObject({ ok: false });
      expect(checkFormValues(FORM, { environment: 'staging', [name]: 'x' })).toMatchObject({ ok: false });
      expect(checkApprovalInput([], [], { [name]: 'x' })).toMatchObject({ ok: false });
      expect(checkRejectionInput([name], { [name]: 'x' })).toMatchObject({ ok: false });
    }
  });
});

describe('checkRejectionInput', () => {
  test('only declared input names, required ones not enforced; a gate without inputs takes none', () => {
    expect(checkRejectionInput(['FEEDBACK'], { FEEDBACK: 'fix it' })).toEqual({
      ok: true,
      outputs: { FEEDBACK: 'fix it' },
    });
    expect(checkRejectionInput(['FEEDBACK'], {})).toEqual({ ok: true, outputs: {} });
    expect(checkRejectionInput(['FEEDBACK'], { PATH: '/nonexistent' })).toMatchObject({ ok: false });
    expect(checkRejectionInput(['FEEDBACK'], { OTHER: 'x' })).toEqual({
      ok: false,
      errors: ['OTHER is not an input of the approval'],
    });
    expect(checkRejectionInput([], { FEEDBACK: 'x' })).toEqual({
      ok: false,
      errors: ['FEEDBACK: the approval declares no input'],
    });
  });
});
