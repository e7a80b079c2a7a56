// The chorus-operator process interface: exit codes and the log line that says why it stopped.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

function runOperator(env: Record<string, string>): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.resolve('operator/main.ts')], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('chorus-operator process', function () {
  this.timeout(120_000);

  it('exits 2 and names the variable when a setting is invalid', () => {
    const r = runOperator({ ADS_PORT: 'not-a-port' });
    expect(r.status).to.equal(2);
    expect(r.output).to.contain('ADS_PORT');
  });

  it('exits 1 with a fatal log line when the kubeconfig cannot be read', () => {
    const r = runOperator({ KUBECONFIG: '/nonexistent/kubeconfig', LOG_FORMAT: 'json' });
    expect(r.status).to.equal(1);
    expect(r.output).to.contain('startup failed').and.contain('/nonexistent/kubeconfig');
  });
});
