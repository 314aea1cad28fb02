/**
 * The JWT signing keys. Rotation never leaves a receiver unable to verify: a new key is in the
 * JWKS before it signs (published ahead), and an old one stays there until every token it signed
 * has expired.
 */

/** Serialises rotations across replicas (relays racing to rotate create one key). */
export const LOCK_SIGNING_KEYS = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.signing-keys', 0))`;

/** The keys not yet retired, newest activation first, with the database clock. */
export const UNRETIRED_KEYS = `
  SELECT kid, activates_at, now() AS db_now
    FROM signing_keys
   WHERE retires_at IS NULL OR retires_at > now()
   ORDER BY activates_at DESC`;

/**
 * The key that signs now (the newest active one), and how long until a successor takes over,
 * so a replica never keeps signing with it past that.
 */
export const CURRENT_SIGNING_KEY = `
  SELECT kid, algorithm, private_key,
         (SELECT extract(epoch FROM min(n.activates_at) - now()) * 1000
            FROM signing_keys n
           WHERE n.activates_at > now() AND n.retires_at IS NULL) AS successor_in_ms
    FROM signing_keys
   WHERE activates_at <= now() AND (retires_at IS NULL OR retires_at > now())
   ORDER BY activates_at DESC
   LIMIT 1`;

/** What the JWKS publishes: every key not retired, pending ones included (bounded). */
export const PUBLISHED_KEYS = `
  SELECT public_jwk
    FROM signing_keys
   WHERE retires_at IS NULL OR retires_at > now()
   ORDER BY activates_at DESC
   LIMIT 10`;

/** $1 kid, $2 algorithm, $3 sealed private key, $4 public JWK, $5 seconds until it signs. */
export const INSERT_SIGNING_KEY = `
  INSERT INTO signing_keys (kid, algorithm, private_key, public_jwk, activates_at)
  VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5::int))`;

/**
 * Every other unretired key retires $2 seconds after key $1 starts signing: the lifetime of the
 * last tokens they signed, and a margin.
 */
export const RETIRE_OTHER_KEYS = `
  UPDATE signing_keys o
     SET retires_at = n.activates_at + make_interval(secs => $2::int)
    FROM signing_keys n
   WHERE n.kid = $1 AND o.kid <> $1 AND o.retires_at IS NULL`;

/** Keys retired for a day are gone for good. */
export const DELETE_OLD_KEYS = `
  DELETE FROM signing_keys WHERE retires_at < now() - interval '1 day'`;

/** For a key rotation: the sealed private keys (at most $1) not sealed like $2. */
export const STALE_SEALED_KEYS = `
  SELECT kid, private_key FROM signing_keys WHERE private_key NOT LIKE $2 LIMIT $1`;

/** Compare and set: $1 kid, $2 the value as read, $3 its new sealing. */
export const RESEAL_KEY = `
  UPDATE signing_keys SET private_key = $3 WHERE kid = $1 AND private_key = $2`;
