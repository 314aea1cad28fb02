import { MigrationInterface, QueryRunner } from 'typeorm';
import { isSealed, SecretBox, type SecretKeyring } from '../src/secrets';

/** Targets sealed per statement round: bounded memory whatever the table's size. */
const BATCH = 500;

/**
 * Secrets at rest: the signing secrets stored in plain text until now are sealed with
 * AES-256-GCM under the current SECRETS_KEY (see src/secrets). The keyring is handed to the
 * migration by migrateDatabase; without one (the generator, a drift check) it refuses to run
 * over plain-text secrets rather than leave them or lose them.
 */
export class EncryptSecretsAtRest1796210000000 implements MigrationInterface {
  name = 'EncryptSecretsAtRest1796210000000';

  constructor(private readonly keyring: SecretKeyring | null = null) {}

  /** This migration with the keyring it seals under (TypeORM builds migrations without arguments). */
  static withKeyring(keyring: SecretKeyring): typeof EncryptSecretsAtRest1796210000000 {
    return class extends EncryptSecretsAtRest1796210000000 {
      constructor() {
        super(keyring);
      }
    };
  }

  async up(queryRunner: QueryRunner): Promise<void> {
    const purpose = 'target.signing_secret';
    for (;;) {
      const rows: Array<{ id: string; s: string | null; p: string | null }> =
        await queryRunner.query(
          `SELECT id, signing_secret AS s, previous_signing_secret AS p
             FROM targets
            WHERE signing_secret NOT LIKE 'enc:v1:%'
               OR previous_signing_secret NOT LIKE 'enc:v1:%'
            ORDER BY id
            LIMIT $1`,
          [BATCH],
        );
      if (rows.length === 0) return;
      if (!this.keyring) {
        throw new Error('plain-text signing secrets need SECRETS_KEY to be sealed');
      }
      const box = new SecretBox(this.keyring);
      const seal = (value: string | null) =>
        value === null || isSealed(value) ? value : box.seal(value, purpose);
      await queryRunner.query(
        `UPDATE targets t
            SET signing_secret = u.s, previous_signing_secret = u.p
           FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(id, s, p)
          WHERE t.id = u.id`,
        [rows.map((r) => r.id), rows.map((r) => seal(r.s)), rows.map((r) => seal(r.p))],
      );
    }
  }

  async down(): Promise<void> {
    // Deliberately irreversible: writing secrets back in plain text is not a rollback we offer.
  }
}
