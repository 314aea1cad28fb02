export {
  ALLOWED_HOSTS_ENV,
  MAX_TARGET_URL_LENGTH,
  canonicalIp,
  checkResolvedAddress,
  checkTargetUrl,
  classifyAddress,
  NO_ALLOWED_HOSTS,
  parseAllowedHosts,
  type AllowedHosts,
} from './address-policy';
export { classifyOutcome, type OutcomeClassification } from './outcome-classifier';
export { TargetConnections } from './target-connections';
export {
  invokeTarget,
  type InvokeOptions,
  type TargetRequest,
  type TargetResponse,
} from './target-invoker';
export { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifySignature } from './target-signature';
export {
  generateStandardSecret,
  standardSecretProblem,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from './standard-webhooks';
export {
  DEFAULT_RESPONSE_HEADERS,
  NEVER_KEPT_HEADERS,
  responseHeaderProblem,
} from './response-record';
export {
  requestClientCredentialsToken,
  TokenRequestError,
  type AccessToken,
  type ClientCredentials,
} from './oauth-token';
export { OAuthTokenCache } from './token-cache';
