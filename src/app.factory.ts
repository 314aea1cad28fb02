import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { json } from 'express';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import type { AppConfig } from './config';
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
  if (config.roles.has('api')) setUpOpenApi(app);
  return app;
}

function setUpOpenApi(app: INestApplication): void {
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
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Tenant API key' })
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' }, 'admin')
      .build(),
    { extraModels: [ProblemDto, FieldErrorDto] },
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
}
