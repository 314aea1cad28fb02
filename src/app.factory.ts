import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { json } from 'express';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import type { AppConfig } from './config';
import { CONSOLE_PATH, consoleAssets } from './web-console';
import {
  BATCH_BODY_LIMIT,
  BATCH_PATH,
  BODY_LIMIT,
  Clock,
  FieldErrorDto,
  ProblemDto,
  ProblemFilter,
  requestDeadline,
  StrictValidationPipe,
} from './common';

/**
 * Builds the whole application for a resolved configuration (database URL known). main.ts and
 * the end-to-end tests share it, so tests exercise exactly what runs in production.
 */
export async function createApp(config: AppConfig, clock?: Clock): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, clock), {
    bufferLogs: true,
    bodyParser: false,
    // Errors reach the caller (main.ts reports them and exits); Nest must not exit on its own.
    abortOnError: false,
  });
  app.useLogger(app.get(Logger));
  app.use(requestDeadline(config.requestTimeoutMs));
  // The batch route's own, larger limit comes first: a body it has read is not read again.
  app.use(BATCH_PATH, json({ limit: BATCH_BODY_LIMIT, strict: true }));
  app.useBodyParser('json', { limit: BODY_LIMIT, strict: true });
  app.disable('x-powered-by');
  app.set('etag', false);
  app.useGlobalPipes(new StrictValidationPipe());
  app.useGlobalFilters(new ProblemFilter());
  if (config.roles.has('api')) {
    setUpOpenApi(app);
    // The web console: static files on the api role's origin, calling only its public API.
    app.use(CONSOLE_PATH, consoleAssets());
  }
  return app;
}

function setUpOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, openApiDocument(app), { jsonDocumentUrl: 'docs-json' });
}

/**
 * The OpenAPI document of the api role's routes. `/docs-json` serves it; the typed client in
 * `src/client` is generated from it (`npm run client:generate`), and the suite fails when the
 * two disagree or when the document does not pass Redocly's recommended rules.
 */
export function openApiDocument(app: INestApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('dueline')
      .setDescription(
        'A durable, multi-tenant job scheduler on Postgres. Tenant routes take ' +
          '`Authorization: Bearer <api key>`; tenant administration takes the admin token. ' +
          'Errors are RFC 9457 `application/problem+json` documents.',
      )
      .setVersion('0.1.0')
      .addServer('/', 'this server')
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Tenant API key' })
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' }, 'admin')
      .build(),
    {
      extraModels: [ProblemDto, FieldErrorDto],
      // `schedules.create`, `runs.cancel`: stable names for generated clients and the linter.
      operationIdFactory: operationId,
    },
  );
  document.info.license = { name: 'UNLICENSED' };
  return document;
}

function operationId(controllerKey: string, methodKey: string): string {
  const resource = controllerKey.replace(/Controller$/, '');
  return `${resource.charAt(0).toLowerCase()}${resource.slice(1)}.${methodKey}`;
}
