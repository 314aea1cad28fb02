import { Global, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { DuelineMetrics } from './dueline-metrics';
import { HttpMetricsMiddleware } from './http-metrics.middleware';
import { Lifecycle } from './lifecycle';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';

@Global()
@Module({
  controllers: [MetricsController],
  providers: [MetricsService, DuelineMetrics, Lifecycle],
  exports: [Lifecycle],
})
export class ObservabilityModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(HttpMetricsMiddleware).forRoutes('*path');
  }
}
