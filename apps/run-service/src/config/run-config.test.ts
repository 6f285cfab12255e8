import { loadRunConfig } from './run-config';

describe('run config of isolation and bounds', () => {
  it('defaults: no uid range, 256 processes, 16 MiB of output, 1 GiB per run directory, 256 MiB free; own files outside RUN_WORK_DIR', () => {
    const config = loadRunConfig({ RUN_WORK_DIR: '/srv/runs', RUN_PRIVATE_DIR: '/srv/private' });
    expect(config).toMatchObject({
      stepMaxProcesses: 256,
      stepLogMaxBytes: 16 * 1024 * 1024,
      runDirMaxBytes: 1024 * 1024 * 1024,
      runDirCheckMs: 1000,
      minFreeBytes: 256 * 1024 * 1024,
      privateDir: '/srv/private',
      spillDir: '/srv/private/outage-spill',
      stateDir: '/srv/private/replica-state',
    });
    expect(config.stepUidRange).toBeUndefined();
  });

  it('parses RUN_STEP_UID_RANGE and the step limits', () => {
    const config = loadRunConfig({
      RUN_STEP_UID_RANGE: '200000-265535',
      RUN_STEP_MAX_PROCESSES: '64',
      RUN_STEP_MAX_ADDRESS_BYTES: '1073741824',
      RUN_STEP_MAX_CPU_SECONDS: '600',
    });
    expect(config).toMatchObject({
      stepUidRange: { first: 200000, last: 265535 },
      stepMaxProcesses: 64,
      stepMaxAddressBytes: 1073741824,
      stepMaxCpuSeconds: 600,
    });
  });

  it.each([
    [{ RUN_STEP_UID_RANGE: '0-100' }, /RUN_STEP_UID_RANGE/],
    [{ RUN_STEP_UID_RANGE: '300-200' }, /RUN_STEP_UID_RANGE/],
    [
      { RUN_WORK_DIR: '/srv/runs', RUN_PRIVATE_DIR: '/srv/runs/private' },
      /RUN_PRIVATE_DIR: must not be inside RUN_WORK_DIR/,
    ],
    [
      { RUN_WORK_DIR: '/srv/runs', RUN_SPILL_DIR: '/srv/runs/.outage-spill' },
      /RUN_SPILL_DIR: must not be inside RUN_WORK_DIR/,
    ],
    [{ RUN_WORK_DIR: '/srv/runs', RUN_STATE_DIR: '/srv/runs' }, /RUN_STATE_DIR: must not be inside RUN_WORK_DIR/],
    [{ RUN_STEP_LOG_MAX_BYTES: '100' }, /RUN_STEP_LOG_MAX_BYTES/],
  ])('refuses %j', (env, message) => {
    expect(() => loadRunConfig(env)).toThrow(message);
  });
});
