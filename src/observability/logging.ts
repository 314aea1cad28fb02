import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { LogLevel } from '../config';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * Structured JSON logs. Each request gets an id (the caller's X-Request-Id when it is sane),
 * echoed back in the response. Only method, path and status are logged about a request: never
 * its body, its query string, or its Authorization header.
 */
export function loggingParams(level: LogLevel): Params {
  return {
    pinoHttp: {
      level,
      genReqId: (req, res) => {
        const incoming = req.headers['x-request-id'];
        const id =
          typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], remove: true },
      serializers: {
        req: (req: IncomingMessage & { id?: string }) => ({
          id: req.id,
          method: req.method,
          path: (req.url ?? '').split('?')[0],
        }),
        res: (res: { statusCode: number }) => ({ status: res.statusCode }),
      },
      customLogLevel: (_req, res, error) =>
        error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      autoLogging: {
        ignore: (req) => req.url === '/metrics' || (req.url ?? '').startsWith('/health'),
      },
    },
  };
}
