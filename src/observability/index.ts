export { Lifecycle } from './lifecycle';
export type { LifecycleEvent, RunIds } from './lifecycle-event';
export { loggingParams } from './logging';
export { ObservabilityModule } from './observability.module';
export { MetricsService, type PeerMetricsSource } from './metrics.service';
