import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable } from '../../../src/common';
import { NoWritableHostError, parseDatabaseUrl, ReadOnlyServerError } from '../../../src/database';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    [
      'no writable server',
      new NoWritableHostError(parseDatabaseUrl('postgres://a/db'), ['unreachable']),
    ],
    ['a read-only server', new ReadOnlyServerError({ host: 'a', port: 5432 })],
    ['a refused connection', withCode('ECONNREFUSED')],
    ['a connection exception (08006)', withCode('08006')],
    ['an administrator shutdown (57P01)', withCode('57P01')],
    ['a write on a read-only server (25006)', withCode('25006')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['a pool that could not connect in time', new Error('timeout exceeded when trying to connect')],
    [
      'a driver error inside TypeORM',
      new QueryFailedError('SELECT 1', [], withCode('57P01', 'terminating connection')),
    ],
    [
      'a cause inside a wrapper',
      Object.assign(new Error('wrapped'), { cause: withCode('ECONNRESET') }),
    ],
  ])('is true for %s', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', new QueryFailedError('INSERT', [], withCode('23505'))],
    ['a syntax error', withCode('42601')],
    ['a plain bug', new TypeError('undefined is not a function')],
    ['a non-error', 'boom'],
  ])('is false for %s', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
