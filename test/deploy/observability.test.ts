/**
 * The Grafana dashboard and the sample alert rules in `infra/` (docs/deployment.md "Metrics";
 * issue "The first hour", item 9) parse, and every metric they query is one the apps export
 * (`METRIC_NAMES`, or prom-client's process metrics and Prometheus' own `up`), so a renamed
 * metric cannot silently empty a panel or mute an alert.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { METRIC_NAMES } from '@dagu-mcp/runtime';

const ROOT = join(__dirname, '..', '..');
const EXPORTED = new Set<string>([...Object.values(METRIC_NAMES), 'up']);

/** The metric names a PromQL expression reads (histogram series folded to their metric). */
function metricsOf(expr: string): string[] {
  const names = [...expr.matchAll(/\b(dagu_[a-z_]+|up)\b(?=\s*[{[)]|\s*$|\s*[<>=!])/g)].map((m) => m[1] ?? '');
  return names.map((n) => n.replace(/_(bucket|count|sum)$/, ''));
}

interface Panel {
  title: string;
  targets?: Array<{ expr: string }>;
}

test('the Grafana dashboard is valid JSON whose every panel queries exported metrics', () => {
  const dashboard = JSON.parse(readFileSync(join(ROOT, 'infra/grafana/dagu-runs.json'), 'utf8')) as {
    title: string;
    panels: Panel[];
  };
  expect(dashboard.title).toBe('dagu-mcp runs');
  const used = new Set<string>();
  for (const panel of dashboard.panels) {
    expect(panel.targets?.length ?? 0).toBeGreaterThan(0);
    for (const target of panel.targets ?? []) {
      const names = metricsOf(target.expr);
      expect({ panel: panel.title, names: names.length > 0 }).toEqual({ panel: panel.title, names: true });
      for (const name of names)
        expect({ panel: panel.title, name, exported: EXPORTED.has(name) }).toMatchObject({ exported: true });
      names.forEach((n) => used.add(n));
    }
  }
  // Every run metric the issue asks a platform team to chart is on the dashboard.
  for (const name of [
    METRIC_NAMES.runsStarted,
    METRIC_NAMES.runsFinished,
    METRIC_NAMES.runDuration,
    METRIC_NAMES.stepDuration,
    METRIC_NAMES.runsActive,
    METRIC_NAMES.runQueueOldestAge,
    METRIC_NAMES.schedulerLag,
    METRIC_NAMES.checkpointWait,
    METRIC_NAMES.busQueueJobs,
  ])
    expect(used).toContain(name);
});

test('the sample alert rules are Prometheus rule groups over exported metrics', () => {
  const rules = parse(readFileSync(join(ROOT, 'infra/prometheus/dagu-alerts.yaml'), 'utf8')) as {
    groups: Array<{ name: string; rules: Array<{ alert: string; expr: string; labels: { severity: string } }> }>;
  };
  const alerts = rules.groups.flatMap((g) => g.rules);
  expect(alerts.map((a) => a.alert)).toEqual(
    expect.arrayContaining(['DaguRunsFailing', 'DaguQueueStalled', 'DaguSchedulerLagging', 'DaguNoReadyReplica']),
  );
  for (const alert of alerts) {
    expect(['warning', 'critical']).toContain(alert.labels.severity);
    const names = metricsOf(alert.expr);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names)
      expect({ alert: alert.alert, name, exported: EXPORTED.has(name) }).toMatchObject({ exported: true });
  }
});
