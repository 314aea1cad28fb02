import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { queryRows } from '../database/sql';
import { BUDGET_BALANCE, OPEN_BUDGET, SPEND_TOKENS } from './dispatch-budget.sql';

export interface BudgetBalance {
  /** Whole attempts the tenant may start now. */
  available: number;
  /** How long until the next token when none is available (0: one is). */
  waitMs: number;
}

/** Enforces a tenant's dispatchRatePerSecond inside the caller's claim transaction. */
@Injectable()
export class DispatchBudget {
  async balance(em: EntityManager, tenantId: string): Promise<BudgetBalance> {
    let [row] = await queryRows<{ tokens: number; rate_per_second: number }>(em, BUDGET_BALANCE, [
      tenantId,
    ]);
    if (!row) {
      // First dispatch of this tenant: open its bucket (once), full.
      await em.query(OPEN_BUDGET, [tenantId]);
      [row] = await queryRows(em, BUDGET_BALANCE, [tenantId]);
    }
    if (!row) return { available: 0, waitMs: 0 };
    const available = Math.max(0, Math.floor(row.tokens));
    const waitMs = available > 0 ? 0 : Math.ceil(((1 - row.tokens) / row.rate_per_second) * 1000);
    return { available, waitMs };
  }

  async spend(em: EntityManager, tenantId: string, tokens: number): Promise<void> {
    if (tokens > 0) await em.query(SPEND_TOKENS, [tenantId, tokens]);
  }
}
