// PROMETHEUS_MAPPER_YAML: statsd_exporter-style mappings replace the default ones.
import { expect } from 'chai';
import { SettingsError } from '../../../../sidecar/settings/settings-error.js';
import { createPrometheusExporter } from '../../../../sidecar/stats/prometheus.js';
import { parseMapperYaml } from '../../../../sidecar/stats/prometheus-mapper.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';

const YAML = `mappings:
  - match: "ratelimit.service.rate_limit.*.*.total_hits"
    name: "rl_hits"
    match_metric_type: counter
    labels:
      domain: "$1"
      descriptor: "$2"
  - match: "ratelimit\\\\.service\\\\.rate_limit\\\\.(.*)\\\\.over_limit"
    match_type: regex
    name: "rl_over"
    labels:
      key: "$1"
  - match: "ratelimit.service.rate_limit.*.*.near_limit"
    action: drop
  - match: "ratelimit_server.*.response_time"
    name: "rl_response_seconds"
    observer_type: histogram
    labels:
      method: "$1"
`;

describe('PROMETHEUS_MAPPER_YAML mapper', () => {
  it('maps globs and regexes with $n labels, honours match_metric_type and drop, escapes the rest', () => {
    const map = parseMapperYaml(YAML, 'm.yaml');
    expect(map('ratelimit.service.rate_limit.d.k_v.total_hits', 'counter')).to.deep.equal({
      name: 'rl_hits',
      labels: { domain: 'd', descriptor: 'k_v' },
      labelNames: ['domain', 'descriptor'],
      seconds: false,
    });
    expect(map('ratelimit.service.rate_limit.d.k_v.total_hits', 'gauge')?.name).to.equal(
      'ratelimit_service_rate_limit_d_k_v_total_hits',
    );
    expect(map('ratelimit.service.rate_limit.d.a.b.over_limit', 'counter')).to.deep.include({
      name: 'rl_over',
      labels: { key: 'd.a.b' },
    });
    expect(map('ratelimit.service.rate_limit.d.k.near_limit', 'counter')).to.equal(null);
    expect(map('ratelimit_server.ShouldRateLimit.response_time', 'timer')).to.deep.include({
      name: 'rl_response_seconds',
      seconds: true,
    });
  });

  it('drives the exporter', async () => {
    const store = new StatsStore();
    store.counter('ratelimit.service.rate_limit.d.k.total_hits').add(4);
    store.counter('ratelimit.service.rate_limit.d.k.near_limit').add(1);
    store.timer('ratelimit_server.ShouldRateLimit.response_time').recordMs(3);
    const exporter = createPrometheusExporter(store, {
      extraTagKeys: [],
      responseTimeAsMilliseconds: false,
      mapper: parseMapperYaml(YAML, 'm.yaml'),
    });
    const text = await exporter.metrics();
    expect(text).to.contain('rl_hits{domain="d",descriptor="k"} 4');
    expect(text).to.not.contain('near_limit');
    expect(text).to.contain('rl_response_seconds_count{method="ShouldRateLimit"} 1');
  });

  it('refuses malformed files with a message naming the file and the entry', () => {
    const bad: [string, string][] = [
      ['mappings: [', 'PROMETHEUS_MAPPER_YAML m.yaml: '],
      ['other: 1', 'expected a top-level `mappings:` list'],
      ['mappings:\n  - name: x', 'mapping 1 has no match'],
      ['mappings:\n  - match: a.*', 'mapping 1 (a.*) has no name'],
      ['mappings:\n  - match: "("\n    match_type: regex\n    name: x', 'mapping 1 has an invalid regex "("'],
      ['mappings:\n  - match: a\n    name: x\n    match_metric_type: nope', 'unknown match_metric_type nope'],
    ];
    for (const [text, message] of bad) {
      expect(() => parseMapperYaml(text, 'm.yaml'), text).to.throw(SettingsError, message);
    }
  });
});
