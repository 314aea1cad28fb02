import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { PgBossService } from '../queue';

/** pg-boss is ready when it is started and its schema answers a query. */
@Injectable()
export class QueueHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly queue: PgBossService,
  ) {}

  async check(key: string): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check(key);
    if (!this.queue.isStarted()) return indicator.down({ message: 'pg-boss is not started' });
    try {
      const version = await withTimeout(this.queue.boss.schemaVersion(), 2000);
      return indicator.up({ schemaVersion: version });
    } catch {
      return indicator.down({ message: 'pg-boss schema is unreachable' });
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
