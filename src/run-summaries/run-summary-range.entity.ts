import { Check, Column, Entity, Exclusion, PrimaryColumn } from 'typeorm';

/**
 * The ledger of summarised ranges [range_from, range_to) of scheduled_at: a range is summarised
 * once (the primary key makes a repeat a no-op) and never one that overlaps another (the
 * exclusion refuses it), so no run is counted twice in run_summaries.
 */
@Entity({ name: 'run_summary_ranges' })
@Check('run_summary_ranges_order_check', 'range_from < range_to')
@Exclusion('run_summary_ranges_no_overlap', 'USING gist (tstzrange(range_from, range_to) WITH &&)')
export class RunSummaryRangeEntity {
  @PrimaryColumn({
    name: 'range_from',
    type: 'timestamptz',
    primaryKeyConstraintName: 'run_summary_ranges_pkey',
  })
  rangeFrom: Date;

  @PrimaryColumn({
    name: 'range_to',
    type: 'timestamptz',
    primaryKeyConstraintName: 'run_summary_ranges_pkey',
  })
  rangeTo: Date;

  /** Runs the range's summaries count. */
  @Column({ type: 'integer' })
  runs: number;

  @Column({ name: 'summarised_at', type: 'timestamptz', default: () => 'now()' })
  summarisedAt: Date;
}
