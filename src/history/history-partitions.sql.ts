/**
 * The history partitions of `occurrences` and `attempts` (RANGE on scheduled_at, a DEFAULT
 * partition for instants outside every range; migration PartitionedHistory). Every change to
 * the set of partitions runs under MAINTENANCE_LOCK, so any number of relays may maintain it and
 * each partition is created once and dropped once. Partition names are built by
 * `partition-names.ts` only (never from input), which is why the DDL below may splice them.
 */

/**
 * Serialises history maintenance across replicas, for the transaction: a second caller waits,
 * then sees what the first created and creates nothing twice.
 */
export const MAINTENANCE_LOCK = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.history-partitions', 0))`;

/**
 * A failing lock wait ends the maintenance transaction instead of queueing every hot-path
 * statement behind its ACCESS EXCLUSIVE request; the next round tries again. Shorter than
 * Postgres's deadlock_timeout (1 s by default): where maintenance's wait closes a cycle with a
 * hot-path statement's, maintenance gives up first, so the deadlock detector never picks a
 * claim, completion or insert as its victim.
 */
export const BOUNDED_LOCK_WAIT = `SET LOCAL lock_timeout = '200ms'`;

/**
 * The history's partitioned parents, before any partition is touched: the order in which every
 * statement locks them (parent first, then its partitions), so maintenance never holds a
 * partition's lock while it waits for a parent's that a statement holding the parent waits on.
 * ACCESS EXCLUSIVE is what ATTACH and DETACH need of the parents anyway; the wait is bounded
 * (BOUNDED_LOCK_WAIT) and what follows under it is short (DDL on empty or old tables).
 */
export const LOCK_HISTORY_PARENTS = `
  LOCK TABLE ONLY occurrences, ONLY attempts IN ACCESS EXCLUSIVE MODE`;

/**
 * An expired partition, before its drop, kept from (auto)vacuum: its last updates made dead
 * tuples, so autovacuum is often at work on it right then, and a DROP waiting 200 ms behind the
 * parents' lock gives up long before Postgres cancels an autovacuum in its way (after
 * deadlock_timeout). SHARE UPDATE EXCLUSIVE is the mode vacuum itself takes: it waits for a
 * running autovacuum (which is cancelled once it has blocked us for deadlock_timeout) and keeps
 * the next from starting, while conflicting with no claim, insert or update (those take ROW
 * EXCLUSIVE at most), so the longer wait it is given (VACUUM_LOCK_WAIT) holds up no one.
 */
export const VACUUM_LOCK_WAIT = `SET LOCAL lock_timeout = '5s'`;
export const holdOffVacuum = (partitions: readonly string[]): string =>
  `LOCK TABLE ${partitions.map((p) => `ONLY ${p}`).join(', ')} IN SHARE UPDATE EXCLUSIVE MODE`;

/**
 * A try at a step under LOCK_HISTORY_PARENTS that can fail on a lock wait without ending the
 * transaction: the caller rolls back to the savepoint, pauses and tries again, keeping what it
 * did before (see HistoryPartitionsRepository.underParentsLock).
 */
export const LOCK_TRY_SAVEPOINT = `SAVEPOINT history_parents_lock`;
export const LOCK_TRY_RELEASE = `RELEASE SAVEPOINT history_parents_lock`;
export const LOCK_TRY_ROLLBACK = `ROLLBACK TO SAVEPOINT history_parents_lock`;

/**
 * The range partitions of a table, oldest first, with their bounds as instants (the bound text
 * carries its UTC offset, so the cast does not depend on the session's time zone). $1 the
 * partitioned table.
 */
export const LIST_RANGE_PARTITIONS = `
  SELECT p.name, p.bounds[1]::timestamptz AS from_at, p.bounds[2]::timestamptz AS to_at
    FROM (SELECT c.relname AS name,
                 regexp_match(pg_get_expr(c.relpartbound, c.oid),
                              'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)') AS bounds
            FROM pg_inherits i
            JOIN pg_class c ON c.oid = i.inhrelid
           WHERE i.inhparent = $1::regclass) p
   WHERE p.bounds IS NOT NULL
   ORDER BY from_at`;

/** The oldest run the DEFAULT partition holds before $1 (null: none). */
export const OLDEST_DEFAULT_RUN_BEFORE = `
  SELECT min(scheduled_at) AS oldest FROM occurrences_default WHERE scheduled_at < $1`;

/**
 * Keeps runs and attempts out of the DEFAULT partitions while a range is carved out of them:
 * the rows of the range are moved and the ATTACH that follows finds none left (no insert can
 * slip in between; ATTACH takes ACCESS EXCLUSIVE on the DEFAULT partition anyway).
 */
export const LOCK_DEFAULT_PARTITIONS = `
  LOCK TABLE occurrences_default, attempts_default IN ACCESS EXCLUSIVE MODE`;

/** Whether the DEFAULT partition holds runs in [$1, $2). */
export const DEFAULT_HOLDS_RANGE = `
  SELECT EXISTS (SELECT 1 FROM occurrences_default
                  WHERE scheduled_at >= $1 AND scheduled_at < $2) AS holds`;

/** The new partition's table before it is attached: the parent's columns and CHECKs. */
export const createStandalone = (table: string, parent: string): string =>
  `CREATE TABLE ${table} (LIKE ${parent} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`;

/**
 * Moves the DEFAULT partition's rows of [$1, $2) into the standalone table that becomes their
 * partition: copied, then deleted from DEFAULT (attempts first: nothing references them; the
 * runs' delete then finds no attempt left to cascade to). The same transaction attaches the
 * table, so no reader ever sees the rows twice or not at all.
 */
export const copyDefaultRange = (table: string, defaultPartition: string): string => `
  INSERT INTO ${table} SELECT * FROM ${defaultPartition}
   WHERE scheduled_at >= $1 AND scheduled_at < $2`;
export const deleteDefaultRange = (defaultPartition: string): string => `
  DELETE FROM ${defaultPartition} WHERE scheduled_at >= $1 AND scheduled_at < $2`;

/**
 * The range as a CHECK before ATTACH, so attaching does not scan the table to prove it (the
 * constraint is dropped once the partition bound stands for it).
 */
export const addRangeCheck = (table: string, from: string, to: string): string => `
  ALTER TABLE ${table} ADD CONSTRAINT ${table}_range_check
    CHECK (scheduled_at >= '${from}' AND scheduled_at < '${to}')`;
export const dropRangeCheck = (table: string): string =>
  `ALTER TABLE ${table} DROP CONSTRAINT ${table}_range_check`;

/**
 * Attaching creates the partition's copies of the parent's indexes, its primary key, the unique
 * identity key and (for attempts) the foreign key to the runs; runs are attached before their
 * attempts so that key validates.
 */
export const attachPartition = (parent: string, table: string, from: string, to: string): string =>
  `ALTER TABLE ${parent} ATTACH PARTITION ${table} FOR VALUES FROM ('${from}') TO ('${to}')`;

/**
 * Retention never drops a live run: a partition with any run still QUEUED, RUNNING or
 * RETRY_WAIT is kept (read through the live runs' partial indexes). Checked once before the
 * summary (no lock that would stop writers meanwhile: a generic plan of any UPDATE locks every
 * partition) and again under LOCK_HISTORY_PARENTS, which holds until the drop commits.
 */
export const liveRunsIn = (runs: string): string => `
  SELECT count(*)::int AS live FROM ${runs} WHERE state IN ('QUEUED', 'RUNNING', 'RETRY_WAIT')`;

export const detachPartition = (parent: string, table: string): string =>
  `ALTER TABLE ${parent} DETACH PARTITION ${table}`;
export const dropTable = (table: string): string => `DROP TABLE ${table}`;

/** The longest history any tenant keeps (historyRetentionDays), in days (null: no tenant). */
export const LONGEST_TENANT_RETENTION_DAYS = `
  SELECT max(history_retention_days) AS days FROM tenants`;

/** The database clock: partitions are planned against it, never a replica's. */
export const DATABASE_NOW = `SELECT now() AS now`;
