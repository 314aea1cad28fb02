import { Injectable } from '@nestjs/common';
import { SqlRunner, type Tx } from '../database';
import {
  CURRENT_SIGNING_KEY,
  DELETE_OLD_KEYS,
  INSERT_SIGNING_KEY,
  LOCK_SIGNING_KEYS,
  PUBLISHED_KEYS,
  RESEAL_KEY,
  RETIRE_OTHER_KEYS,
  STALE_SEALED_KEYS,
  UNRETIRED_KEYS,
} from './signing-keys.sql';

export interface NewSigningKey {
  kid: string;
  algorithm: string;
  sealedPrivateKey: string;
  publicJwk: object;
}

@Injectable()
export class SigningKeysRepository {
  constructor(private readonly sql: SqlRunner) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.sql.transaction(work);
  }

  async lock(tx: Tx): Promise<void> {
    await this.sql.rows(LOCK_SIGNING_KEYS, [], tx);
  }

  async unretired(tx: Tx): Promise<Array<{ kid: string; activatesAt: Date; dbNow: Date }>> {
    const rows = await this.sql.rows<{ kid: string; activates_at: Date; db_now: Date }>(
      UNRETIRED_KEYS,
      [],
      tx,
    );
    return rows.map((r) => ({ kid: r.kid, activatesAt: r.activates_at, dbNow: r.db_now }));
  }

  async insert(tx: Tx, key: NewSigningKey, activatesInSeconds: number): Promise<void> {
    await this.sql.rows(
      INSERT_SIGNING_KEY,
      [key.kid, key.algorithm, key.sealedPrivateKey, key.publicJwk, activatesInSeconds],
      tx,
    );
  }

  async retireOthers(tx: Tx, kid: string, afterActivationSeconds: number): Promise<void> {
    await this.sql.rows(RETIRE_OTHER_KEYS, [kid, afterActivationSeconds], tx);
  }

  async deleteOld(tx: Tx): Promise<void> {
    await this.sql.rows(DELETE_OLD_KEYS, [], tx);
  }

  async current(): Promise<{
    kid: string;
    algorithm: string;
    sealedPrivateKey: string;
    successorInMs: number | null;
  } | null> {
    const [row] = await this.sql.rows<{
      kid: string;
      algorithm: string;
      private_key: string;
      successor_in_ms: string | null;
    }>(CURRENT_SIGNING_KEY);
    return row
      ? {
          kid: row.kid,
          algorithm: row.algorithm,
          sealedPrivateKey: row.private_key,
          successorInMs: row.successor_in_ms === null ? null : Number(row.successor_in_ms),
        }
      : null;
  }

  async published(): Promise<object[]> {
    const rows = await this.sql.rows<{ public_jwk: object }>(PUBLISHED_KEYS);
    return rows.map((r) => r.public_jwk);
  }

  async staleSealed(
    limit: number,
    currentKeyId: string,
  ): Promise<Array<{ kid: string; sealed: string }>> {
    const rows = await this.sql.rows<{ kid: string; private_key: string }>(STALE_SEALED_KEYS, [
      limit,
      `enc:v1:${currentKeyId}:%`,
    ]);
    return rows.map((r) => ({ kid: r.kid, sealed: r.private_key }));
  }

  async reseal(kid: string, read: string, resealed: string): Promise<void> {
    await this.sql.rows(RESEAL_KEY, [kid, read, resealed]);
  }
}
