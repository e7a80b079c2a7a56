// The backend contract suite against the embedded memory backend.
import { createMemoryBackend } from '../../../../sidecar/limiter/backend-memory.js';
import { counterBackendContract } from './counter-backend-contract.js';

counterBackendContract('memory backend', {
  create: async (clock) => createMemoryBackend({ clock }),
});
