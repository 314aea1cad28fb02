import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Live pollers announce themselves here, so each can compute its fair share of the shards. */
@Entity({ name: 'poller_presence' })
export class PollerPresenceEntity {
  @PrimaryColumn({
    name: 'poller_id',
    type: 'text',
    primaryKeyConstraintName: 'poller_presence_pkey',
  })
  pollerId: string;

  @Column({ name: 'seen_until', type: 'timestamptz' })
  seenUntil: Date;
}
