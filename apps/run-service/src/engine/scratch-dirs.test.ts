import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createScratchDir, removeScratchBase, removeScratchDir } from './scratch-dirs';

/** Attempt scratch directories: private, distinct, removed with or without leftovers. */
afterAll(() => removeScratchBase());

it('creates distinct private directories under one base a step user can traverse but not list', () => {
  const a = createScratchDir();
  const b = createScratchDir();
  expect(a).not.toBe(b);
  expect(dirname(a)).toBe(dirname(b));
  expect(statSync(a).mode & 0o777).toBe(0o700);
  expect(statSync(dirname(a)).mode & 0o777).toBe(0o711);
  removeScratchDir(a);
  removeScratchDir(b);
  expect(existsSync(a)).toBe(false);
  expect(existsSync(b)).toBe(false);
});

it('removes a directory a step left files in', () => {
  const dir = createScratchDir();
  writeFileSync(`${dir}/left-behind`, 'x');
  removeScratchDir(dir);
  expect(existsSync(dir)).toBe(false);
});

it('the base goes with removeScratchBase, and a later attempt gets a new one', () => {
  const dir = createScratchDir();
  const base = dirname(dir);
  removeScratchBase();
  expect(existsSync(base)).toBe(false);
  const next = createScratchDir();
  expect(dirname(next)).not.toBe(base);
  expect(existsSync(next)).toBe(true);
});

it('a base removed under the process is made again', () => {
  const first = createScratchDir();
  rmSync(dirname(first), { recursive: true, force: true });
  const next = createScratchDir();
  expect(existsSync(next)).toBe(true);
  expect(dirname(next)).not.toBe(dirname(first));
  removeScratchDir(next);
});
