// The metric names a PromQL expression selects, read with Prometheus's own grammar
// (@prometheus-io/lezer-promql): every VectorSelector's metric identifier. Test-only; any thread.
// Grafana's range variables ($__rate_interval and the like) are replaced by a duration first, and
// an expression the grammar cannot parse fails loudly rather than yielding fewer names.
import { parser } from '@prometheus-io/lezer-promql';

const GRAFANA_RANGES = /\$__(rate_interval|interval|range)\b/g;

export function metricNamesOf(expr: string): string[] {
  const query = expr.replace(GRAFANA_RANGES, '5m');
  const tree = parser.parse(query);
  const names: string[] = [];
  const errors: number[] = [];
  tree.iterate({
    enter(node) {
      if (node.type.isError) errors.push(node.from);
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') names.push(query.slice(node.from, node.to));
    },
  });
  if (errors.length > 0) throw new Error(`PromQL does not parse at ${errors[0]}: ${query}`);
  return names;
}
