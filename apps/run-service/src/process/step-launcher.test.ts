import { createStepLauncher, findSetpriv, resolveStepIdentity } from './step-launcher';

const identity = { name: 'dagu-step', uid: 990, gid: 980, home: '/nonexistent' };

describe('step launcher (docs/security.md)', () => {
  it('switches user, drops groups and privileges, and sets the parent-death signal in one setpriv exec', () => {
    const launcher = createStepLauncher({ identity, setpriv: '/usr/bin/setpriv', ownUid: 0 });
    expect(launcher.identity).toEqual(identity);
    expect(launcher.wrap('/bin/sh', ['-c', 'echo $1', 'sh', 'a b'])).toEqual({
      file: '/usr/bin/setpriv',
      args: [
        '--reuid',
        '990',
        '--regid',
        '980',
        '--clear-groups',
        '--no-new-privs',
        '--pdeathsig',
        'SIGKILL',
        '--',
        '/bin/sh',
        '-c',
        'echo $1',
        'sh',
        'a b',
      ],
    });
  });

  it('without a step user sets only the parent-death signal, or starts processes as they are without setpriv', () => {
    const withSetpriv = createStepLauncher({ identity: undefined, setpriv: '/usr/bin/setpriv', ownUid: 1000 });
    expect(withSetpriv.identity).toBeUndefined();
    expect(withSetpriv.wrap('/bin/true', [])).toEqual({
      file: '/usr/bin/setpriv',
      args: ['--pdeathsig', 'SIGKILL', '--', '/bin/true'],
    });
    const direct = createStepLauncher({ identity: undefined, setpriv: undefined, ownUid: 1000 });
    expect(direct.wrap('/bin/true', ['x'])).toEqual({ file: '/bin/true', args: ['x'] });
  });

  it('refuses to start when it cannot switch: no setpriv, or not root', () => {
    expect(() => createStepLauncher({ identity, setpriv: undefined, ownUid: 0 })).toThrow(/setpriv is not installed/);
    expect(() => createStepLauncher({ identity, setpriv: '/usr/bin/setpriv', ownUid: 1000 })).toThrow(
      /runs as uid 1000 and cannot switch users/,
    );
  });

  it('names a missing user and root as start errors', () => {
    expect(() => resolveStepIdentity('no-such-user-dagu-x')).toThrow(
      /RUN_STEP_USER=no-such-user-dagu-x: no such user .*useradd --system no-such-user-dagu-x/,
    );
    expect(() => resolveStepIdentity('root')).toThrow(/is root/);
  });

  it('finds setpriv on PATH only where it is executable', () => {
    expect(findSetpriv('/nonexistent-dir')).toBeUndefined();
    expect(findSetpriv('')).toBeUndefined();
  });
});
