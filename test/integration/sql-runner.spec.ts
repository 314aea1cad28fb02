import { DataSource, QueryFailedError, QueryRunnerAlreadyReleasedError } from 'typeorm';
import {
  databaseRoundTrips,
  databaseWaits,
  dataSourceOptions,
  SqlRunner,
  StatementAfterLastError,
  type Tx,
} from '../../src/database';
import { SCHEMA } from '../../src/schema';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/**
 * SqlRunner's transactions on pipelining connections: BEGIN is written with the work's first
 * statement, statements written without waiting still run in order and fail together, and
 * nothing of a failed transaction stays.
 */
describe('SqlRunner transactions', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let sql: SqlRunner;
  const rowsOf = async () =>
    (await dataSource.query('SELECT n FROM scratch ORDER BY n')).map((r: { n: number }) => r.n);

  beforeAll(async () => {
    database = await createTestDatabase({ empty: true });
    dataSource = await new DataSource(dataSourceOptions(database.url, SCHEMA, 2)).initialize();
    sql = new SqlRunner(dataSource);
    await dataSource.query('CREATE TABLE scratch (n int PRIMARY KEY)');
  });
  afterAll(async () => {
    await dataSource.destroy();
    await database.drop();
  });
  beforeEach(() => dataSource.query('TRUNCATE scratch'));

  it('writes BEGIN with the first statement: three round trips, two waits', async () => {
    const before = { roundTrips: databaseRoundTrips(), waits: databaseWaits() };
    await sql.transaction((tx) => sql.affected('INSERT INTO scratch VALUES ($1)', [1], tx));
    expect(databaseRoundTrips() - before.roundTrips).toBe(3);
    expect(databaseWaits() - before.waits).toBe(2);
    expect(await rowsOf()).toEqual([1]);
  });

  it('runs statements written together in the order written, each seeing the ones before', async () => {
    const seen = await sql.transaction(async (tx) => {
      const [, , count] = await Promise.all([
        sql.affected('INSERT INTO scratch VALUES ($1)', [1], tx),
        sql.affected('INSERT INTO scratch VALUES ($1)', [2], tx),
        sql.rows<{ n: number }>('SELECT count(*)::int AS n FROM scratch', [], tx),
      ]);
      return count[0].n;
    });
    expect(seen).toBe(2);
    expect(await rowsOf()).toEqual([1, 2]);
  });

  it('rolls back all of it when a statement written with others fails, and says which failed', async () => {
    const failing = sql.transaction((tx) =>
      Promise.all([
        sql.affected('INSERT INTO scratch VALUES ($1)', [1], tx),
        sql.rows('SELECT 1 / $1::int AS x', [0], tx),
        sql.affected('INSERT INTO scratch VALUES ($1)', [2], tx),
      ]),
    );
    await expect(failing).rejects.toBeInstanceOf(QueryFailedError);
    await expect(failing).rejects.toMatchObject({ driverError: { code: '22012' } });
    expect(await rowsOf()).toEqual([]);
  });

  it("rolls back what the work wrote when it throws, TypeORM's own statements included", async () => {
    await expect(
      sql.transaction(async (tx) => {
        await sql.affected('INSERT INTO scratch VALUES ($1)', [1], tx);
        // The manager is the transaction's: TypeORM must not open (and commit) one of its own.
        expect(sql.manager(tx).queryRunner?.isTransactionActive).toBe(true);
        await sql.manager(tx).query('INSERT INTO scratch VALUES ($1)', [2]);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await rowsOf()).toEqual([]);
  });

  it("writes the COMMIT behind the transaction's last statements: one wait for them all", async () => {
    const before = { roundTrips: databaseRoundTrips(), waits: databaseWaits() };
    await sql.transaction(async (tx) => {
      await sql.affected('INSERT INTO scratch VALUES ($1)', [1], tx);
      void sql.rowsAtCommit('INSERT INTO scratch VALUES ($1)', [2], tx);
      void sql.rowsAtCommit('INSERT INTO scratch VALUES ($1)', [3], tx);
    });
    // BEGIN with the first insert; the two last inserts with the COMMIT.
    expect(databaseRoundTrips() - before.roundTrips).toBe(5);
    expect(databaseWaits() - before.waits).toBe(2);
    expect(await rowsOf()).toEqual([1, 2, 3]);
  });

  it('rolls back all of it when a last statement fails, and the transaction throws its failure', async () => {
    const failing = sql.transaction(async (tx) => {
      await sql.affected('INSERT INTO scratch VALUES ($1)', [1], tx);
      void sql.rowsAtCommit('INSERT INTO scratch VALUES ($1)', [2], tx);
      void sql.rowsAtCommit('SELECT 1 / $1::int AS x', [0], tx);
      return 'done';
    });
    await expect(failing).rejects.toBeInstanceOf(QueryFailedError);
    await expect(failing).rejects.toMatchObject({ driverError: { code: '22012' } });
    expect(await rowsOf()).toEqual([]);
    // The connection is clean for its next user: no transaction left open on it.
    await sql.transaction((tx) => sql.affected('INSERT INTO scratch VALUES ($1)', [4], tx));
    expect(await rowsOf()).toEqual([4]);
  });

  it('refuses a statement after a last one, before writing it, and rolls back', async () => {
    const refused = sql.transaction(async (tx) => {
      void sql.rowsAtCommit('INSERT INTO scratch VALUES ($1)', [1], tx);
      await sql.affected('INSERT INTO scratch VALUES ($1)', [2], tx);
    });
    await expect(refused).rejects.toBeInstanceOf(StatementAfterLastError);
    expect(await rowsOf()).toEqual([]);
  });

  it('refuses a statement on a transaction that has ended (its connection is back in the pool)', async () => {
    let kept: Tx | null = null;
    await sql.transaction(async (tx) => {
      kept = tx;
      await sql.affected('INSERT INTO scratch VALUES ($1)', [1], tx);
    });
    await expect(sql.rows('SELECT 1', [], kept!)).rejects.toThrow(QueryRunnerAlreadyReleasedError);
    expect(await rowsOf()).toEqual([1]);
  });
});
