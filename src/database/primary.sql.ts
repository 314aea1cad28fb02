/**
 * What libpq's `target_session_attrs=read-write` checks, asked of every server we connect to:
 * a standby (in recovery) or a server whose sessions default to read-only cannot take our
 * writes, so no connection to it is ever handed to a role.
 */
export const SESSION_IS_WRITABLE = `
  SELECT NOT pg_is_in_recovery()
     AND current_setting('transaction_read_only') = 'off' AS writable`;

/**
 * The same check for a session that will carry our writes, which also holds the session to
 * `synchronous_commit` of at least `on`: a commit returns only once it is flushed on the
 * synchronous standby (when the formation has one), so nothing we acknowledge is lost with the
 * primary. A server or database configured weaker (`off`, `local`, `remote_write`) is raised
 * to `on` for our sessions; a stronger `remote_apply` is kept.
 */
export const PREPARE_WRITE_SESSION = `
  SELECT NOT pg_is_in_recovery()
     AND current_setting('transaction_read_only') = 'off' AS writable,
     set_config(
       'synchronous_commit',
       CASE WHEN current_setting('synchronous_commit') IN ('off', 'local', 'remote_write')
            THEN 'on' ELSE current_setting('synchronous_commit') END,
       false) AS synchronous_commit`;
