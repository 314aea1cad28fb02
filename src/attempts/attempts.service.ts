import { Injectable } from '@nestjs/common';
import type { Tx } from '../database';
import type { Attempt } from './attempt';
import { AttemptsRepository, FencedAttemptEnd } from './attempts.repository';

/**
 * The append-only audit of attempts. Writes take the caller's transaction: an attempt starts
 * in its claim's transaction and ends in its run's transition, so the two never disagree.
 */
@Injectable()
export class AttemptsService {
  constructor(private readonly attempts: AttemptsRepository) {}

  end(tx: Tx, ends: FencedAttemptEnd[]): Promise<void> {
    return this.attempts.endMany(tx, ends);
  }

  /** A completion the fence rejected, noted on the attempt it came from. */
  noteStale(
    tx: Tx,
    tenantId: string,
    runId: string,
    fencingToken: number,
    report: { httpStatus?: number | null; detail: string },
  ): Promise<void> {
    return this.attempts.markStale(
      tx,
      tenantId,
      runId,
      fencingToken,
      report.httpStatus ?? null,
      report.detail,
    );
  }

  list(tenantId: string, runId: string): Promise<Attempt[]> {
    return this.attempts.list(tenantId, runId);
  }
}
