import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../../common';
import { SigningKeysService } from '../../signing-keys';

@ApiTags('auth')
@Public()
@Controller('.well-known')
export class JwksController {
  constructor(private readonly keys: SigningKeysService) {}

  @Get('jwks.json')
  // Receivers may cache it this long: a new key is published well before it signs (see
  // OIDC_KEY_PUBLISH_AHEAD_SECONDS), so a cached copy never lacks the key of a valid token.
  @Header('Cache-Control', 'public, max-age=300')
  @ApiOperation({
    summary: 'The public keys of the JWTs dueline sends to targets with auth type oidc',
    // Public: a receiver fetches it without credentials.
    security: [],
  })
  @ApiOkResponse({
    schema: {
      type: 'object',
      properties: { keys: { type: 'array', items: { type: 'object' } } },
    },
  })
  jwks(): Promise<{ keys: object[] }> {
    return this.keys.jwks();
  }
}
