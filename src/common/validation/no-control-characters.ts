import { Matches } from 'class-validator';

/** Names end up in logs, UIs and headers: no control characters (newlines, NUL, escapes). */
export const NoControlCharacters = (): PropertyDecorator =>
  Matches(/^[^\p{Cc}]*$/u, { message: '$property must not contain control characters' });
