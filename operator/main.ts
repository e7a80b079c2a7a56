// chorus-operator: reads the environment once, builds the operator, and stops it cleanly on SIGTERM/SIGINT.
import os from 'node:os';
import { systemClock } from '../sidecar/clock.js';
import { createLogger } from '../sidecar/logging.js';
import { createKubeClient } from './kube/kube-client.js';
import { loadKubeConfig } from './kube/kube-config.js';
import { loadOperatorSettings, SettingsError } from './operator-settings.js';
import { startOperator } from './operator.js';
import { sidecarLoadCheck } from './ratelimit/sidecar-load-check.js';

/** Exit codes: 0 clean stop, 1 runtime/startup failure, 2 invalid settings. */
async function main(): Promise<number> {
  let settings;
  try {
    settings = loadOperatorSettings(process.env, os.hostname());
  } catch (err) {
    if (err instanceof SettingsError) {
      process.stderr.write(`chorus-operator: invalid setting ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const logger = createLogger({ level: settings.logLevel, format: settings.logFormat });
  let operator;
  try {
    const kube = createKubeClient(loadKubeConfig(settings.kubeconfig, process.env));
    logger.info('starting chorus-operator', { apiServer: kube.server, pod: settings.podName });
    operator = await startOperator(settings, { kube, logger, clock: systemClock, loadCheck: sidecarLoadCheck });
  } catch (err) {
    logger.fatal('startup failed', { error: (err as Error).message });
    await logger.close();
    return 1;
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  logger.info('stopping on signal', { signal });
  await operator.stop();
  logger.info('stopped');
  await logger.close();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`chorus-operator: ${String(err)}\n`);
    process.exit(1);
  },
);
