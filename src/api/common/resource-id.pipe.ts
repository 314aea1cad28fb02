import { PipeTransform } from '@nestjs/common';
import { NotFoundError } from '../../common/problem/domain-errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Path ids are UUIDs. A malformed one answers 404 like any id the tenant cannot see, so the
 * answer never tells ids that exist elsewhere from ids that cannot exist.
 */
export class ResourceIdPipe implements PipeTransform<string, string> {
  constructor(private readonly resource: string) {}

  transform(value: string): string {
    if (!UUID.test(value)) throw new NotFoundError(this.resource, value.slice(0, 64));
    return value.toLowerCase();
  }
}
