import type { DuelineClient } from '../client';
import { CliError } from './cli-error';
import type { Io, OutputFormat } from './output';

export type Flags = Record<string, string | boolean | undefined>;

/** What every command gets: the typed client, where to print, and its arguments. */
export interface CommandContext {
  client: DuelineClient;
  io: Io;
  format: OutputFormat;
  args: string[];
  flags: Flags;
}

export function arg(ctx: CommandContext, index: number, name: string): string {
  const value = ctx.args[index];
  if (!value) throw CliError.usage(`missing <${name}>`);
  return value;
}

export function flag(ctx: CommandContext, name: string): string | undefined {
  const value = ctx.flags[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw CliError.usage(`--${name} needs a value`);
  return value;
}

export function requiredFlag(ctx: CommandContext, name: string): string {
  const value = flag(ctx, name);
  if (value === undefined) throw CliError.usage(`--${name} is required`);
  return value;
}

export function intFlag(ctx: CommandContext, name: string): number | undefined {
  const value = flag(ctx, name);
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw CliError.usage(`--${name} must be a whole number`);
  return Number(value);
}

export function jsonFlag(ctx: CommandContext, name: string): Record<string, unknown> | undefined {
  const value = flag(ctx, name);
  if (value === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error();
    return parsed as Record<string, unknown>;
  } catch {
    throw CliError.usage(`--${name} must be a JSON object`);
  }
}

/** Fails on a flag the command does not take, rather than ignoring a typo. */
export function allowFlags(ctx: CommandContext, allowed: string[]): void {
  const unknown = Object.keys(ctx.flags).filter((f) => !allowed.includes(f));
  if (unknown.length) throw CliError.usage(`this command does not take --${unknown[0]}`);
}
