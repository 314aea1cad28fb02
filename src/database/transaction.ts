import type { EntityManager } from 'typeorm';

/**
 * An open database transaction, as services see it: a handle to pass to the repositories whose
 * statements must commit or roll back together. Only this module can reach the connection
 * behind it, so no code outside a repository can run SQL through it.
 */
export interface Tx {
  readonly __transaction: unique symbol;
}

const managers = new WeakMap<Tx, EntityManager>();

export function wrapTransaction(manager: EntityManager): Tx {
  const tx = Object.freeze({}) as Tx;
  managers.set(tx, manager);
  return tx;
}

export function managerOf(tx: Tx): EntityManager {
  const manager = managers.get(tx);
  if (!manager) throw new Error('not a transaction of this process');
  return manager;
}
