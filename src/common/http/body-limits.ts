/** The largest JSON body we read; a schedule's payload alone is capped lower (64 KiB). */
export const BODY_LIMIT = '256kb';

/**
 * POST /schedules/batch reads up to 4 MiB: 1,000 ordinary schedules take a few hundred KiB, so
 * this leaves about 4 KiB per item, not 64 KiB; a client with large payloads sends smaller
 * batches. It bounds what one request can make the service parse and hold at once.
 */
export const BATCH_BODY_LIMIT = '4mb';
export const BATCH_PATH = '/schedules/batch';
