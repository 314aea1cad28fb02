import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { queryRows } from '../database/sql';
import { BUDGET_WAIT_MS } from './dispatch-budget.sql';

/**
 * A tenant's dispatchRatePerSecond. Claims spend tokens in their own statement; this says, for a
 * claim refused for want of one, when the next token comes (its job is requeued for then).
 */
@Injectable()
export class DispatchBudget {
  async waitMs(em: EntityManager, tenantId: string): Promise<number> {
    const [row] = await queryRows<{ wait_ms: number }>(em, BUDGET_WAIT_MS, [tenantId]);
    return row ? Math.ceil(row.wait_ms) : 0;
  }
}
