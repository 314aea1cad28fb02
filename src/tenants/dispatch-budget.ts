import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { queryRows } from '../database/sql';
import { BUDGET_WAIT_MS, OPEN_BUDGET, SPEND_TOKEN } from './dispatch-budget.sql';

/** Enforces a tenant's dispatchRatePerSecond inside the caller's claim transaction. */
@Injectable()
export class DispatchBudget {
  /** How long until the tenant may start another attempt (0: now). */
  async waitMs(em: EntityManager, tenantId: string): Promise<number> {
    let [row] = await queryRows<{ wait_ms: number }>(em, BUDGET_WAIT_MS, [tenantId]);
    if (!row) {
      // First dispatch of this tenant: open its bucket (once), full.
      await em.query(OPEN_BUDGET, [tenantId]);
      [row] = await queryRows<{ wait_ms: number }>(em, BUDGET_WAIT_MS, [tenantId]);
    }
    return row ? Math.ceil(row.wait_ms) : 0;
  }

  async spend(em: EntityManager, tenantId: string): Promise<void> {
    await em.query(SPEND_TOKEN, [tenantId]);
  }
}
