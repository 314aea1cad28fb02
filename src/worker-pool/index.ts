export { type ProcessMetrics, WORKER_PROCESS_FLAG } from './pool-message';
export { restartDelayMs } from './restart-backoff';
export { WorkerPool, type WorkerPoolOptions } from './worker-pool';
export { joinPool, type PoolChannel, type PoolChildOptions } from './worker-process';
