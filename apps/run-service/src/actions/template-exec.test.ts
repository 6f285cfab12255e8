/**
 * The Go-template subset of `template.render` (dagu-actions §1.7): what it
 * keeps and its error texts.
 */
import { renderTemplate } from './template-exec';

describe('renderTemplate', () => {
  it.each<[string, string, unknown, string]>([
    ['fields', '{{ .a.b }}-{{ .c }}', { a: { b: 1 }, c: 'x' }, '1-x'],
    ['dot', '{{ . }}', 'v', 'v'],
    ['trim markers', 'a  {{- .x -}}  b', { x: 1 }, 'a1b'],
    ['comment', 'a{{/* hidden */}}b', {}, 'ab'],
    ['if / else if / else', '{{ if .a }}A{{ else if .b }}B{{ else }}C{{ end }}', { a: false, b: 1 }, 'B'],
    ['with', '{{ with .u }}{{ .name }}{{ else }}none{{ end }}', { u: { name: 'n' } }, 'n'],
    ['range list and else', '{{ range .l }}[{{ . }}]{{ else }}empty{{ end }}', { l: [] }, 'empty'],
    ['range map, sorted', '{{ range $k, $v := .m }}{{ $k }}={{ $v }};{{ end }}', { m: { b: 2, a: 1 } }, 'a=1;b=2;'],
    ['variables', '{{ $x := .n }}{{ $x = add 1 $x }}{{ $x }}', { n: 1 }, '2'],
    ['root variable in range', '{{ range .l }}{{ $.p }}{{ . }}{{ end }}', { l: [1, 2], p: '-' }, '-1-2'],
    ['parenthesised pipeline', '{{ (index .l 1).x }}', { l: [{ x: 0 }, { x: 9 }] }, '9'],
    ['pipeline order', '{{ "a,b" | split "," | join "+" | upper }}', {}, 'A+B'],
    [
      'default and empty',
      '{{ .x | default "d" }} {{ empty .x }} {{ .y | default "d" }}',
      { x: '', y: 'y' },
      'd true y',
    ],
    ['count and add', '{{ .l | count }} {{ 2 | add 3 }}', { l: [1, 2, 3] }, '3 5'],
    ['comparisons', '{{ if and (gt .n 1) (le .n 3) (ne .s "x") }}ok{{ end }}', { n: 2, s: 'y' }, 'ok'],
    ['printf', '{{ printf "%s=%d %.1f %q" "a" 3 2.26 "q" }}', {}, 'a=3 2.3 "q"'],
    ['print a list and a map', '{{ .l }} {{ .m }}', { l: [1, 'a'], m: { k: true } }, '[1 a] map[k:true]'],
    ['toJson', '{{ .m | toJson }}', { m: { a: [1] } }, '{"a":[1]}'],
    ['literal ${...} kept', 'x ${HOME} {{ "y" }}', {}, 'x ${HOME} y'],
  ])('%s', (_label, template, data, expected) => {
    expect(renderTemplate(template, data)).toBe(expected);
  });

  it.each<[string, string, unknown, string]>([
    ['missing key', '{{ .a.b }}', { a: {} }, 'map has no entry for key "b"'],
    ['unknown function', '{{ env "HOME" }}', {}, 'function "env" not defined'],
    ['no end', '{{ if .a }}x', { a: 1 }, 'template: parse error'],
    ['stray end', '{{ end }}', {}, 'template: parse error'],
    ['unclosed action', '{{ .a', {}, 'template: parse error'],
    ['bad token', '{{ .a ! }}', { a: 1 }, 'template: parse error'],
  ])('%s fails: %s', (_label, template, data, needle) => {
    expect(() => renderTemplate(template, data)).toThrow(needle);
  });
});
