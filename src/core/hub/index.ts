// Pure decisions of the hub-and-spoke sync: where a hub object lands on a spoke, the spoke object
// it declares, what the spoke reports back, which namespaces it may delete, which Secrets it sends,
// which rules and credentials it runs on, its token's renewal, and what a grant gives it on the hub.
export { localPlace, type HubNames, type Mapping, type Place } from './names.ts';
export { DEFAULT_GENERATION_KEYS, desiredLocal, localChanged, managedKeys, parseOrigin, paused, type ContentMode, type GenerationKeys, type ManagedKeys } from './desired.ts';
export { hubReport, type HubReport } from './report.ts';
export { namespaceFor, removalOf } from './namespaces.ts';
export { foreignRule, hubCredentialsNamespace, hubCredentialsNamespaceProblem, hubCredentialsProblem, misplacedCredentials } from './trust.ts';
export { hubTokenClaims, renewalDue, tokenLifetimeSeconds, tokenRequest, tokenRequestPath, withToken, type HubToken } from './token.ts';
export { grantLabels, grantPlan, grantRefusal, spokeAccount } from './grant.ts';
export { controlledBy, secretHash, secretUpload, type SecretUpload } from './secrets.ts';
export { checkHubRule, defaultCredentialsSecret, type HubRule, type HubRuleCheck } from './rule.ts';
export { hubRuleStatus, hubRuleStatusChanged, type HubRuleFacts } from './status.ts';
