// Upstream's default statsd→Prometheus mapping as the /metrics endpoint applies it.
import { expect } from 'chai';
import { escapeMetricName, mapStat, splitTags } from '../../../../sidecar/stats/prometheus.js';
import { createPrometheusExporter } from '../../../../sidecar/stats/prometheus.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';

describe('Prometheus default mapping', () => {
  it('maps rate limit stats with 2 and 3 key segments to labelled names', () => {
    expect(mapStat('ratelimit.service.rate_limit.mongo_cps.database_users.total_hits', 'counter')).to.deep.equal({
      name: 'ratelimit_service_rate_limit_total_hits',
      labels: { domain: 'mongo_cps', key1: 'database_users' },
      seconds: false,
    });
    expect(mapStat('ratelimit.service.rate_limit.d.k1_v1.k2.shadow_mode', 'counter')).to.deep.equal({
      name: 'ratelimit_service_rate_limit_shadow_mode',
      labels: { domain: 'd', key1: 'k1_v1', key2: 'k2' },
      seconds: false,
    });
    // Four segments: no mapping matches, so the escaped statsd name is kept.
    expect(mapStat('ratelimit.service.rate_limit.d.a.b.c.near_limit', 'counter').name).to.equal(
      'ratelimit_service_rate_limit_d_a_b_c_near_limit',
    );
    expect(mapStat('ratelimit.service.rate_limit.d.domain_not_found', 'counter').name).to.equal(
      'ratelimit_service_rate_limit_d_domain_not_found',
    );
    expect(mapStat('ratelimit.service.rate_limit.d.k.over_limit_with_local_cache', 'counter').labels).to.deep.equal({});
  });

  it('maps the service, server and config stats', () => {
    expect(mapStat('ratelimit.service.call.should_rate_limit.redis_error', 'counter')).to.deep.include({
      name: 'ratelimit_service_should_rate_limit_error',
      labels: { err_type: 'redis_error' },
    });
    expect(mapStat('ratelimit_server.ShouldRateLimit.total_requests', 'counter')).to.deep.include({
      name: 'ratelimit_service_total_requests',
      labels: { grpc_method: 'ShouldRateLimit' },
    });
    expect(mapStat('ratelimit_server.ShouldRateLimit.response_time', 'timer')).to.deep.equal({
      name: 'ratelimit_service_response_time_seconds',
      labels: { grpc_method: 'ShouldRateLimit' },
      seconds: true,
    });
    expect(mapStat('ratelimit.service.config_load_error', 'counter').name).to.equal(
      'ratelimit_service_config_load_error',
    );
    // A gauge never matches a counter-only mapping.
    expect(mapStat('ratelimit_server.ShouldRateLimit.total_requests', 'gauge').labels).to.deep.equal({});
    expect(escapeMetricName('9a.b-c=d')).to.equal('_9a_b_c_d');
    expect(splitTags('a.b.__env=prod.__zone=z')).to.deep.equal({ name: 'a.b', tags: { env: 'prod', zone: 'z' } });
  });

  it('renders counters, gauges and timers from the store at scrape time, with EXTRA_TAGS as labels', async () => {
    const store = new StatsStore({ env: 'prod' });
    store.counter('ratelimit.service.rate_limit.d.k.total_hits').add(5);
    store.counter('ratelimit.service.config_load_success').inc();
    store.gauge('ratelimit.redis_pool.cx_active').set(3);
    store.timer('ratelimit_server.ShouldRateLimit.response_time').recordMs(2);
    const exporter = createPrometheusExporter(store, { extraTagKeys: ['env'], responseTimeAsMilliseconds: false });
    const text = await exporter.metrics();
    expect(text).to.contain('ratelimit_service_rate_limit_total_hits{domain="d",key1="k",env="prod"} 5');
    expect(text).to.contain('ratelimit_service_config_load_success{env="prod"} 1');
    expect(text).to.contain('ratelimit_redis_pool_cx_active{env="prod"} 3');
    expect(text).to.contain(
      'ratelimit_service_response_time_seconds_bucket{le="0.005",grpc_method="ShouldRateLimit",env="prod"} 1',
    );
    store.counter('ratelimit.service.rate_limit.d.k.total_hits').add(2);
    expect(await exporter.metrics()).to.contain(
      'ratelimit_service_rate_limit_total_hits{domain="d",key1="k",env="prod"} 7',
    );
  });
});
