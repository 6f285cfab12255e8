import { join } from 'node:path';

/** The real Dagu DAG files the tests run (copied into this repository; test input, kept byte for byte). */
export const DAGU_EXAMPLES_DIR = join(__dirname, 'dagu-examples');

/** The path of one of them, e.g. `daguExample('ex04-nested-workflows.yaml')`. */
export function daguExample(file: string): string {
  return join(DAGU_EXAMPLES_DIR, file);
}
