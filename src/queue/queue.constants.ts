/** pg-boss keeps its tables in a Postgres schema of its own, apart from ours. */
export const PGBOSS_SCHEMA = 'pgboss';
