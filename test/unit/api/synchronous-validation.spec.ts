import { getMetadataStorage } from 'class-validator';
import { ApiModule } from '../../../src/api';
import { validateJsonObject, ValidationError } from '../../../src/common';
import { CreateScheduleDto } from '../../../src/api/schedules/schedule-request.dto';
import { CreateTargetDto } from '../../../src/api/targets/target.dto';

/**
 * Bodies are checked with class-validator's synchronous run, which skips a constraint marked
 * asynchronous and never waits for a promise a constraint returns: every rule must stay
 * synchronous for it to check what the promise-based run checked.
 */
describe('request validation runs synchronously', () => {
  it('no constraint of any DTO is asynchronous', () => {
    expect(ApiModule).toBeDefined(); // every controller's DTOs (and their decorators) are loaded
    const storage = getMetadataStorage() as unknown as {
      constraintMetadatas: Map<object, Array<{ async: boolean; name: string; instance: object }>>;
    };
    const constraints = [...storage.constraintMetadatas.values()].flat();
    // The custom ones (a URL a target may call, header names, ...) are among them.
    expect(constraints.length).toBeGreaterThan(0);
    const asynchronous = constraints
      .filter(
        (c) =>
          c.async ||
          (c.instance as { validate: (...args: unknown[]) => unknown }).validate.constructor
            .name === 'AsyncFunction',
      )
      .map((c) => c.name);
    expect(asynchronous).toEqual([]);
  });

  it('refuses what the rules refuse, every field at once', () => {
    const body = { name: '', targetId: 'nope', cron: 7, extra: 1 };
    const refusal = (() => {
      try {
        validateJsonObject(CreateScheduleDto, body);
        return null;
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(ValidationError);
    const fields = (refusal as ValidationError).errors.map((e) => e.field);
    expect(new Set(fields)).toEqual(new Set(['name', 'targetId', 'cron', 'extra']));
  });

  it('runs the custom constraints: a framing header of a target is refused', () => {
    const target = { name: 't', url: 'https://example.com/hook' };
    expect(validateJsonObject(CreateTargetDto, target)).toBeInstanceOf(CreateTargetDto);
    expect(() =>
      validateJsonObject(CreateTargetDto, {
        ...target,
        headers: { 'Transfer-Encoding': 'chunked' },
      }),
    ).toThrow(ValidationError);
  });
});
