import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OccurrenceEntity } from '../occurrences/occurrence.entity';

/**
 * Append-only audit of every attempt at a run. Range-partitioned by its run's `scheduled_at`
 * like `occurrences` (the layout lives in migration PartitionedHistory), so a run and its
 * attempts are kept and dropped together.
 */
@Entity({ name: 'attempts' })
export class AttemptEntity {
  @PrimaryColumn({ name: 'run_id', type: 'uuid', primaryKeyConstraintName: 'attempts_pkey' })
  runId: string;

  // No foreign key (migration AttemptsWithoutRunKey): it made every claim probe and lock the run
  // it had just updated; an attempt is only ever appended by the claim that takes its run.
  @ManyToOne(() => OccurrenceEntity, { createForeignKeyConstraints: false })
  @JoinColumn([
    { name: 'run_id', referencedColumnName: 'id' },
    { name: 'scheduled_at', referencedColumnName: 'scheduledAt' },
  ])
  run?: OccurrenceEntity;

  @PrimaryColumn({ name: 'attempt_no', type: 'integer', primaryKeyConstraintName: 'attempts_pkey' })
  attemptNo: number;

  /** Its run's scheduled_at (never changes): the partition key, shared with the run. */
  @PrimaryColumn({
    name: 'scheduled_at',
    type: 'timestamptz',
    primaryKeyConstraintName: 'attempts_pkey',
  })
  scheduledAt: Date;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'worker_id', type: 'text' })
  workerId: string;

  @Column({ name: 'fencing_token', type: 'bigint' })
  fencingToken: string;

  @Column({ name: 'started_at', type: 'timestamptz', default: () => 'now()' })
  startedAt: Date;

  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt: Date | null;

  /** succeeded | failed | retryable | unknown | lease_lost | cancelled | stale; null while running. */
  @Column({ type: 'text', nullable: true })
  outcome: string | null;

  @Column({ name: 'http_status', type: 'integer', nullable: true })
  httpStatus: number | null;

  @Column({ name: 'duration_ms', type: 'integer', nullable: true })
  durationMs: number | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** The target's answer, as kept: allow-listed headers (credentials never) … */
  @Column({ name: 'response_headers', type: 'jsonb', nullable: true })
  responseHeaders: Record<string, string> | null;

  /** … and the start of its body (ATTEMPT_RESPONSE_BODY_BYTES), credentials scrubbed. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  @Column({ name: 'trace_id', type: 'text', nullable: true })
  traceId: string | null;
}
