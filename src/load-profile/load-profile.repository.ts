import { Injectable } from '@nestjs/common';
import { SqlRunner, type Tx } from '../database';
import { LoadWindow, type LoadContribution } from './load-contribution';
import {
  ADD_INSTANTS,
  ADD_RECURRING,
  DELETE_SCHEDULE_LOADS,
  INSTANT_RUNS,
  LOAD_WINDOW,
  LOCK_LOAD_PROFILE,
  LOCK_SCHEDULE_LOADS,
  PRUNE_PAST_INSTANTS,
  PUT_SCHEDULE_LOADS,
  SUBTRACT_INSTANTS,
  SUBTRACT_RECURRING,
} from './load-profile.sql';

/** The tenants' load counters and what each schedule added to them (see load-profile.sql.ts). */
@Injectable()
export class LoadProfileRepository {
  constructor(private readonly sql: SqlRunner) {}

  async lock(tx: Tx, tenantId: string): Promise<void> {
    await this.sql.rows(LOCK_LOAD_PROFILE, [tenantId], tx);
  }

  async window(tenantId: string, tx?: Tx): Promise<LoadWindow> {
    const rows = await this.sql.rows<{
      kind: 'start' | 'recurring' | 'instant';
      period: 'minute' | 'hour' | 'day' | null;
      slot: number | null;
      minute: Date | null;
      runs: number | null;
    }>(LOAD_WINDOW, [tenantId], tx);
    const start = rows.find((r) => r.kind === 'start')!;
    return LoadWindow.of(start.minute!, start.runs ?? 0, {
      recurring: rows
        .filter((r) => r.kind === 'recurring')
        .map((r) => ({ period: r.period!, slot: r.slot!, runs: r.runs! })),
      instants: rows
        .filter((r) => r.kind === 'instant')
        .map((r) => ({ minute: r.minute!, runs: r.runs! })),
    });
  }

  /** One-time runs projected in each of `minutes` (ISO minute starts). */
  async instantRuns(
    tx: Tx,
    tenantId: string,
    minutes: readonly string[],
  ): Promise<Map<string, number>> {
    if (minutes.length === 0) return new Map();
    const rows = await this.sql.rows<{ minute: Date; runs: number }>(
      INSTANT_RUNS,
      [tenantId, minutes],
      tx,
    );
    return new Map(rows.map((r) => [r.minute.toISOString(), r.runs]));
  }

  async lockContributions(
    tx: Tx,
    tenantId: string,
    scheduleIds: readonly string[],
  ): Promise<Map<string, LoadContribution>> {
    const rows = await this.sql.rows<{ schedule_id: string; contribution: LoadContribution }>(
      LOCK_SCHEDULE_LOADS,
      [scheduleIds, tenantId],
      tx,
    );
    return new Map(rows.map((r) => [r.schedule_id, r.contribution]));
  }

  async putContributions(
    tx: Tx,
    tenantId: string,
    loads: ReadonlyArray<{ scheduleId: string; contribution: LoadContribution }>,
  ): Promise<void> {
    if (loads.length === 0) return;
    await this.sql.affected(
      PUT_SCHEDULE_LOADS,
      [tenantId, loads.map((l) => l.scheduleId), loads.map((l) => JSON.stringify(l.contribution))],
      tx,
    );
  }

  async deleteContributions(
    tx: Tx,
    scheduleIds: readonly string[],
  ): Promise<Array<{ tenantId: string; contribution: LoadContribution }>> {
    if (scheduleIds.length === 0) return [];
    const rows = await this.sql.rows<{ tenant_id: string; contribution: LoadContribution }>(
      DELETE_SCHEDULE_LOADS,
      [scheduleIds],
      tx,
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, contribution: r.contribution }));
  }

  /** Adds (sign 1) or takes back (-1) contributions to the tenant's counters. */
  async apply(
    tx: Tx,
    tenantId: string,
    contributions: readonly LoadContribution[],
    sign: 1 | -1,
  ): Promise<void> {
    const recurring: Array<[string, number, number]> = [];
    const instants: Array<[string, number]> = [];
    for (const c of contributions) {
      if (c.runs <= 0) continue;
      if (c.period === 'instant') instants.push([c.minute, c.runs]);
      else if (c.period === 'minute') recurring.push(['minute', 0, c.runs]);
      else for (const slot of c.slots) recurring.push([c.period, slot, c.runs]);
    }
    if (recurring.length > 0) {
      await this.sql.affected(
        sign === 1 ? ADD_RECURRING : SUBTRACT_RECURRING,
        [
          tenantId,
          recurring.map((r) => r[0]),
          recurring.map((r) => r[1]),
          recurring.map((r) => r[2]),
        ],
        tx,
      );
    }
    if (instants.length > 0) {
      await this.sql.affected(
        sign === 1 ? ADD_INSTANTS : SUBTRACT_INSTANTS,
        [tenantId, instants.map((r) => r[0]), instants.map((r) => r[1])],
        tx,
      );
    }
  }

  async prunePastInstants(tx: Tx, tenantId: string): Promise<void> {
    await this.sql.affected(PRUNE_PAST_INSTANTS, [tenantId], tx);
  }
}
