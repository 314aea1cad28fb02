import { PipeTransform } from '@nestjs/common';
import { isUuid, NotFoundError } from '../../common';

/**
 * Path ids are UUIDs. A malformed one answers 404 like any id the tenant cannot see, on every
 * route, so the answer never tells ids that exist elsewhere from ids that cannot exist. The id
 * is echoed truncated: the detail must not become a reflection channel.
 */
export class ResourceIdPipe implements PipeTransform<string, string> {
  constructor(private readonly resource: string) {}

  transform(value: string): string {
    if (!isUuid(value)) throw new NotFoundError(this.resource, value.slice(0, 64));
    return value.toLowerCase();
  }
}
