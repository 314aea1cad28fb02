import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Attempt, AttemptEnd, AttemptOutcomeRecord, MAX_ATTEMPT_ERROR_LENGTH } from './attempt';
import { END_ATTEMPTS, LIST_ATTEMPTS, MARK_ATTEMPT_STALE } from './attempts.sql';

interface AttemptRow {
  run_id: string;
  attempt_no: number;
  worker_id: string;
  fencing_token: string;
  started_at: Date;
  ended_at: Date | null;
  outcome: AttemptOutcomeRecord | null;
  http_status: number | null;
  duration_ms: number | null;
  error: string | null;
}

/** The end of the attempt a fence identifies. */
export interface FencedAttemptEnd extends AttemptEnd {
  runId: string;
  fencingToken: number;
}

@Injectable()
export class AttemptsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One statement for all the attempts a batch of transitions ended (see END_ATTEMPTS). */
  async endMany(em: EntityManager, ends: FencedAttemptEnd[]): Promise<void> {
    if (ends.length === 0) return;
    await em.query(END_ATTEMPTS, [
      ends.map((e) => e.runId),
      ends.map((e) => e.fencingToken),
      ends.map((e) => e.outcome),
      ends.map((e) => e.httpStatus ?? null),
      ends.map((e) =>
        e.durationMs === undefined || e.durationMs === null ? null : Math.round(e.durationMs),
      ),
      ends.map((e) => bounded(e.error)),
    ]);
  }

  async markStale(
    em: EntityManager,
    tenantId: string,
    runId: string,
    fencingToken: number,
    httpStatus: number | null,
    error: string,
  ): Promise<void> {
    await em.query(MARK_ATTEMPT_STALE, [tenantId, runId, fencingToken, httpStatus, bounded(error)]);
  }

  async list(tenantId: string, runId: string): Promise<Attempt[]> {
    const rows: AttemptRow[] = await this.dataSource.query(LIST_ATTEMPTS, [tenantId, runId]);
    return rows.map((row) => ({
      runId: row.run_id,
      attemptNo: row.attempt_no,
      workerId: row.worker_id,
      fencingToken: Number(row.fencing_token),
      startedAt: row.started_at,
      endedAt: row.ended_at,
      outcome: row.outcome,
      httpStatus: row.http_status,
      durationMs: row.duration_ms,
      error: row.error,
    }));
  }
}

function bounded(error: string | null | undefined): string | null {
  if (error === undefined || error === null) return null;
  return error.length > MAX_ATTEMPT_ERROR_LENGTH
    ? `${error.slice(0, MAX_ATTEMPT_ERROR_LENGTH - 1)}…`
    : error;
}
