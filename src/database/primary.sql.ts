/**
 * What libpq's `target_session_attrs=read-write` checks, asked of every server we connect to:
 * a standby (in recovery) or a server whose sessions default to read-only cannot take our
 * writes, so no connection to it is ever handed to a role.
 */
export const SESSION_IS_WRITABLE = `
  SELECT NOT pg_is_in_recovery()
     AND current_setting('transaction_read_only') = 'off' AS writable`;
