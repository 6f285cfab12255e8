import { applyEnvVars, isExportableName, stepEnvBase, withEngineVariables, withExported } from './env-merge';
import { expandVariables } from './interpolate';

const expand = (value: string, env: Readonly<Record<string, string>>): string =>
  expandVariables(value, (name) => env[name]);

describe('env merge (dagu-model §3 layers)', () => {
  it('gives a step a clean base: PATH, locale and time zone only, never the service configuration', () => {
    const source = {
      PATH: '/usr/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      TZ: 'UTC',
      HOME: '/root',
      USER: 'root',
      UNSET: undefined,
      DATABASE_URL: 'postgres://secret',
      DATABASE_URL_FILE: '/run/x',
      REDIS_URL: 'redis://:pw@r',
      DAGU_ENCRYPTION_KEY: 'k',
      AWS_SECRET_ACCESS_KEY: 'a',
    };
    expect(stepEnvBase(source)).toEqual({
      PATH: '/usr/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      TZ: 'UTC',
      HOME: '/root',
      USER: 'root',
    });
    expect(stepEnvBase(source, { name: 'dagu-step', home: '/nonexistent' })).toEqual({
      PATH: '/usr/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      TZ: 'UTC',
      HOME: '/nonexistent',
      USER: 'dagu-step',
      LOGNAME: 'dagu-step',
    });
  });

  it('applies DAG env in order, each value seeing the earlier ones and the base', () => {
    const env = applyEnvVars(
      { HOME: '/h' },
      [
        { key: 'A', value: '${HOME}/a' },
        { key: 'B', value: '$A/b' },
        { key: 'HOME', value: '/other' },
      ],
      expand,
    );
    expect(env).toEqual({ HOME: '/other', A: '/h/a', B: '/h/a/b' });
  });

  it('exports params and output variables with valid names only (positional ones become $1, $2)', () => {
    expect(
      withExported({ A: 'base' }, [
        ['A', 'param'],
        ['1', 'pos'],
        ['OUT', 'x'],
        ['bad-name', 'y'],
      ]),
    ).toEqual({ A: 'param', OUT: 'x' });
    expect(isExportableName('_ok1')).toBe(true);
    expect(isExportableName('9x')).toBe(false);
    // dagu-model §3: no param or output may set PATH, LD_*, DAG_*, …
    expect(
      withExported({ PATH: '/usr/bin' }, [
        ['PATH', '/tmp/evil'],
        ['LD_PRELOAD', 'x'],
        ['DAG_RUN_ID', 'y'],
      ]),
    ).toEqual({
      PATH: '/usr/bin',
    });
  });

  it('lets a later layer win and adds the engine variables last', () => {
    const layered = applyEnvVars(withExported({ X: 'dag' }, [['X', 'param']]), [{ key: 'X', value: 'step' }], expand);
    const env = withEngineVariables(
      { ...layered, DAG_NAME: 'spoofed' },
      {
        dagName: 'd',
        dagRunId: 'r',
        logsUri: 'dagu://runs/d/r/logs',
        stepName: 's',
        workDir: '/w',
        outputFile: '/tmp/o',
      },
    );
    expect(env).toMatchObject({
      X: 'step',
      DAG_NAME: 'd',
      DAG_RUN_ID: 'r',
      DAG_RUN_LOG_FILE: 'dagu://runs/d/r/logs',
      DAG_RUN_STEP_NAME: 's',
      DAG_RUN_WORK_DIR: '/w',
      DAGU_OUTPUT_FILE: '/tmp/o',
    });
  });
});
