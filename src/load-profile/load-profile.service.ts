import { Injectable } from '@nestjs/common';
import { Clock, LoadExceededError } from '../common';
import type { Tx } from '../database';
import type { LoadContribution, LoadWindow } from './load-contribution';
import { LoadProfileRepository } from './load-profile.repository';

/** A schedule's new contribution (null: it adds nothing any more). */
export interface LoadChange {
  scheduleId: string;
  load: LoadContribution | null;
}

/**
 * The tenants' projected load (record module): every change of a schedule replaces what it adds
 * to its tenant's per-minute counters, and a change that would make a minute of the tenant need
 * more runs than its dispatchRatePerSecond allows in a minute is refused instead of
 * turning into lateness later. Maintained counters, so a check costs the same at one schedule
 * or a million.
 */
@Injectable()
export class LoadProfileService {
  constructor(
    private readonly profile: LoadProfileRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * Replaces each schedule's contribution, in order, under the tenant's profile lock (to the
   * commit of `tx`). A change that would overload a minute is refused with its error and changes
   * nothing (the schedule keeps what it had). `fresh`: the schedules are new (nothing to replace).
   */
  async replace(
    tx: Tx,
    tenantId: string,
    changes: readonly LoadChange[],
    options: { fresh?: boolean } = {},
  ): Promise<Array<LoadExceededError | null>> {
    const results = changes.map((): LoadExceededError | null => null);
    const before = options.fresh
      ? new Map<string, LoadContribution>()
      : await this.profile.lockContributions(
          tx,
          tenantId,
          changes.map((c) => c.scheduleId),
        );
    if (changes.every((c) => c.load === null) && before.size === 0) return results;
    await this.profile.lock(tx, tenantId);
    const window = await this.profile.window(tenantId, tx);
    await this.preloadLater(tx, tenantId, window, changes);
    const removed: LoadContribution[] = [];
    const added: LoadContribution[] = [];
    const put: Array<{ scheduleId: string; contribution: LoadContribution }> = [];
    const dropped: string[] = [];
    changes.forEach((change, i) => {
      const old = before.get(change.scheduleId) ?? null;
      if (change.load) {
        const over = window.overloadBy(change.load, old);
        if (over) {
          results[i] = new LoadExceededError(over.minute, over.runs, window.allowedPerMinute);
          return;
        }
      }
      if (old) {
        window.add(old, -1);
        removed.push(old);
      }
      if (change.load) {
        window.add(change.load);
        added.push(change.load);
        put.push({ scheduleId: change.scheduleId, contribution: change.load });
      } else if (old) {
        dropped.push(change.scheduleId);
      }
    });
    await this.profile.apply(tx, tenantId, removed, -1);
    await this.profile.apply(tx, tenantId, added, 1);
    await this.profile.putContributions(tx, tenantId, put);
    if (dropped.length > 0) await this.profile.deleteContributions(tx, dropped);
    if (added.some((c) => c.period === 'instant')) {
      await this.profile.prunePastInstants(tx, tenantId);
    }
    return results;
  }

  /**
   * Schedules that will not fire again (cancelled, completed, deleted before commit) take back
   * what they added. Only lowers counters, so it needs no profile lock; a one-time run's minute
   * that has passed is not touched (it no longer counts, and is pruned).
   */
  async release(tx: Tx, scheduleIds: readonly string[]): Promise<void> {
    const gone = await this.profile.deleteContributions(tx, scheduleIds);
    const byTenant = new Map<string, LoadContribution[]>();
    const now = this.clock.now().getTime();
    for (const { tenantId, contribution } of gone) {
      if (
        contribution.period === 'instant' &&
        new Date(contribution.minute).getTime() + 60_000 <= now
      ) {
        continue;
      }
      byTenant.set(tenantId, [...(byTenant.get(tenantId) ?? []), contribution]);
    }
    for (const [tenantId, contributions] of byTenant) {
      await this.profile.apply(tx, tenantId, contributions, -1);
    }
  }

  /** The tenant's projected runs over the next 24 hours (for GET /usage). */
  window(tenantId: string): Promise<LoadWindow> {
    return this.profile.window(tenantId);
  }

  private async preloadLater(
    tx: Tx,
    tenantId: string,
    window: LoadWindow,
    changes: readonly LoadChange[],
  ): Promise<void> {
    const minutes = new Set<string>();
    for (const { load } of changes) {
      if (load?.period === 'instant' && window.isLater(load)) minutes.add(load.minute);
    }
    const runs = await this.profile.instantRuns(tx, tenantId, [...minutes]);
    for (const minute of minutes) window.knowLater(minute, runs.get(minute) ?? 0);
  }
}
