import { Injectable } from '@nestjs/common';
import { instantBounds, SqlRunner, type Tx } from '../database';
import type { AttemptOutcome } from '../run-vocabulary';
import { Attempt, AttemptEnd, MAX_ATTEMPT_ERROR_LENGTH } from './attempt';
import { END_ATTEMPTS, LIST_ATTEMPTS, MARK_ATTEMPT_STALE } from './attempts.sql';

interface AttemptRow {
  run_id: string;
  attempt_no: number;
  worker_id: string;
  fencing_token: string;
  started_at: Date;
  ended_at: Date | null;
  outcome: AttemptOutcome | null;
  http_status: number | null;
  duration_ms: number | null;
  error: string | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  trace_id: string | null;
}

/** The end of the attempt a fence identifies. */
export interface FencedAttemptEnd extends AttemptEnd {
  runId: string;
  /** The run's scheduled_at, when known: confines the update to the run's partition. */
  scheduledAt?: Date;
  fencingToken: number;
}

@Injectable()
export class AttemptsRepository {
  constructor(private readonly sql: SqlRunner) {}

  /** One statement for all the attempts a batch of transitions ended (see END_ATTEMPTS). */
  async endMany(tx: Tx, ends: FencedAttemptEnd[]): Promise<void> {
    if (ends.length === 0) return;
    await this.sql.affected(
      END_ATTEMPTS,
      [
        ends.map((e) => e.runId),
        ends.map((e) => e.fencingToken),
        ends.map((e) => e.outcome),
        ends.map((e) => e.httpStatus ?? null),
        ends.map((e) =>
          e.durationMs === undefined || e.durationMs === null ? null : Math.round(e.durationMs),
        ),
        ends.map((e) => bounded(e.error)),
        ends.map((e) => (e.response ? JSON.stringify(e.response.headers) : null)),
        ends.map((e) => e.response?.bodyExcerpt ?? null),
        ends.map((e) => e.traceId ?? null),
        ...instantBounds(ends.map((e) => e.scheduledAt)),
      ],
      tx,
    );
  }

  async markStale(
    tx: Tx,
    tenantId: string,
    runId: string,
    fencingToken: number,
    httpStatus: number | null,
    error: string,
  ): Promise<void> {
    await this.sql.affected(
      MARK_ATTEMPT_STALE,
      [tenantId, runId, fencingToken, httpStatus, bounded(error)],
      tx,
    );
  }

  async list(tenantId: string, runId: string): Promise<Attempt[]> {
    const rows = await this.sql.rows<AttemptRow>(LIST_ATTEMPTS, [tenantId, runId]);
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
      response:
        row.http_status !== null && row.response_headers !== null
          ? {
              status: row.http_status,
              headers: row.response_headers,
              bodyExcerpt: row.response_body ?? '',
            }
          : null,
      traceId: row.trace_id,
    }));
  }
}

function bounded(error: string | null | undefined): string | null {
  if (error === undefined || error === null) return null;
  return error.length > MAX_ATTEMPT_ERROR_LENGTH
    ? `${error.slice(0, MAX_ATTEMPT_ERROR_LENGTH - 1)}…`
    : error;
}
