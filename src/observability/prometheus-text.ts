/**
 * The Prometheus text exposition format (version 0.0.4), written by hand: a `# HELP` and a `# TYPE` line per family,
 * then its samples, label values escaped (`\\`, `\"`, `\n`) and made valid UTF-8, so a hostile name (a consumer group
 * with a quote or a newline in it) can neither break a line nor forge a sample.
 */
import { invalidOptions } from '../errors.ts';

export const prometheusContentType = 'text/plain; version=0.0.4; charset=utf-8';

export interface Sample {
  labels?: Readonly<Record<string, string | number>>;
  value: number;
}

export interface MetricFamily {
  /** `[a-zA-Z_:][a-zA-Z0-9_:]*`; a counter's ends in `_total`. */
  name: string;
  help: string;
  type: 'gauge' | 'counter';
  samples: readonly Sample[];
}

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Text as valid UTF-8 (a lone surrogate becomes U+FFFD). */
function wellFormed(text: string): string {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** A label value inside its double quotes. */
export function escapeLabelValue(value: string): string {
  return wellFormed(value).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** A HELP text (no quotes to escape there). */
function escapeHelp(text: string): string {
  return wellFormed(text).replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A sample's value as Prometheus reads it (`NaN`, `+Inf`, `-Inf`, else the number). */
function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

function formatLabels(labels: Readonly<Record<string, string | number>> | undefined): string {
  if (!labels) return '';
  const pairs = Object.entries(labels).map(([name, value]) => {
    if (!labelName.test(name) || name.startsWith('__'))
      throw invalidOptions('labels', `\`${escapeHelp(name)}\` is not a Prometheus label name`);
    return `${name}="${escapeLabelValue(String(value))}"`;
  });
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

/** The exposition of `families`, each once, in the order given; ends with a newline. */
export function renderPrometheus(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    if (!metricName.test(family.name))
      throw invalidOptions('name', `\`${escapeHelp(family.name)}\` is not a Prometheus metric name`);
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      lines.push(`${family.name}${formatLabels(sample.labels)} ${formatValue(sample.value)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
