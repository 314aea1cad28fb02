/**
 * What libpq's `target_session_attrs=read-write` checks, asked of every server we connect to:
 * a standby (in recovery) or a server whose sessions default to read-only cannot take our
 * writes, so no connection to it is ever handed to a role.
 *
 * The answer is the one a session opened now would get, also when asked on a session kept open
 * since earlier (the probe keeps one, see primary-probe.ts): recovery is the server's state, and a
 * reload of the server's configuration reaches open sessions, but a database's or a role's own
 * `default_transaction_read_only` (ALTER DATABASE / ALTER ROLE ... SET) is applied only when a
 * session starts. So the most specific such setting is read from the catalog as well, in the
 * order a new session applies them (database and role, then role, then database, then all
 * roles), cast as the server casts a boolean setting.
 */
export const SESSION_IS_WRITABLE = `
  SELECT NOT pg_is_in_recovery()
     AND current_setting('transaction_read_only') = 'off'
     AND coalesce((
       SELECT NOT split_part(c.setting, '=', 2)::boolean
         FROM pg_db_role_setting s
        CROSS JOIN LATERAL unnest(s.setconfig) AS c(setting)
        WHERE s.setdatabase IN (0, (SELECT oid FROM pg_database WHERE datname = current_database()))
          AND s.setrole IN (0, (SELECT oid FROM pg_roles WHERE rolname = session_user))
          AND split_part(c.setting, '=', 1) = 'default_transaction_read_only'
        ORDER BY CASE WHEN s.setdatabase <> 0 AND s.setrole <> 0 THEN 0
                      WHEN s.setrole <> 0 THEN 1
                      WHEN s.setdatabase <> 0 THEN 2
                      ELSE 3 END
        LIMIT 1), true) AS writable`;

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
