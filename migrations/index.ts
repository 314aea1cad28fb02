import { Init1796012728174 } from './1796012728174-Init';

/** Every migration, oldest first. Each is reviewed SQL; TypeORM only runs them in order. */
export const MIGRATIONS = [Init1796012728174];
