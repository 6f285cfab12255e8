import {
  isValidDagName,
  isValidDagRunId,
  isValidForeachItem,
  isValidReferenceTopic,
  isValidStepName,
  isValidWikiPath,
  isValidWikiPathPrefix,
  isValidWikiWorkspace,
} from './uri-names';

type Case = [string, boolean];

/** dagu-model §2 names and ids. */
const tables: Array<[string, (value: string) => boolean, Case[]]> = [
  [
    'isValidDagName',
    isValidDagName,
    [
      ['nightly-report', true],
      ['a.b_c-D9', true],
      ['a'.repeat(40), true],
      ['a'.repeat(41), false],
      ['', false],
      ['.', false],
      ['..', false],
      ['...', true],
      ['a b', false],
      ['a/b', false],
      ['é', false],
    ],
  ],
  [
    'isValidDagRunId',
    isValidDagRunId,
    [
      ['20260701T010000Z', true],
      ['-_-', true],
      ['1'.repeat(64), true],
      ['1'.repeat(65), false],
      ['', false],
      ['a.b', false],
      ['a b', false],
    ],
  ],
  [
    'isValidStepName',
    isValidStepName,
    [
      ['build', true],
      ['a/b ?#%', true],
      ['..', true],
      ['日本語', true],
      ['😀'.repeat(255), true],
      ['😀'.repeat(256), false],
      ['x'.repeat(255), true],
      ['x'.repeat(256), false],
      ['', false],
      ['bad\uD800', false],
    ],
  ],
  [
    'isValidWikiWorkspace',
    isValidWikiWorkspace,
    [
      ['ops', true],
      ['all', true],
      ['team-a_2', true],
      ['0ops', true],
      ['x'.repeat(64), true],
      ['x'.repeat(65), false],
      ['Ops', false],
      ['a.b', false],
      ['-ops', false],
      ['..', false],
      ['a/b', false],
      ['', false],
    ],
  ],
  [
    'isValidWikiPath',
    isValidWikiPath,
    [
      ['readme', true],
      ['guides/intro.v2', true],
      ['guides/intro.md', false],
      ['README.MD', false],
      ['a/b/c_d-e', true],
      ['/a', false],
      ['a/', false],
      ['a//b', false],
      ['a/../b', false],
      ['..', false],
      ['a/./b', false],
      ['a b', false],
      ['', false],
    ],
  ],
  [
    'isValidWikiPathPrefix',
    isValidWikiPathPrefix,
    [
      ['guides', true],
      ['guides/', true],
      ['guides/in', true],
      ['notes.md', true],
      ['a.MD/', true],
      ['/', false],
      ['', false],
      ['/guides', false],
      ['guides//', false],
      ['../x', false],
    ],
  ],
  [
    'isValidReferenceTopic',
    isValidReferenceTopic,
    [
      ['authoring', true],
      ['a/b c', true],
      ['', false],
      ['\uDC00', false],
    ],
  ],
  [
    'isValidForeachItem',
    isValidForeachItem,
    [
      ['0', true],
      ['12', true],
      ['fan.3', true],
      ['a/b[1].x.7', true],
      ['', false],
      ['x', false],
      ['3.', false],
      ['-1', false],
      ['.3', false],
    ],
  ],
];

describe.each(tables)('%s', (_name, validate, cases) => {
  it.each(cases)('%j → %s', (value, expected) => {
    expect(validate(value)).toBe(expected);
  });
});
