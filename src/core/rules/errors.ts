// Errors of rule evaluation always say where in the rule they come from, so an invalid selector,
// path or override is reported instead of silently matching nothing (as upstream did).

export interface RuleIssue {
  /** Location in the ResourceSyncRule, e.g. `spec.rules[0].match[1].labels[0]`. */
  path: string;
  message: string;
}

export function formatIssue(issue: RuleIssue): string {
  return `${issue.path}: ${issue.message}`;
}

export class RuleError extends Error {
  readonly issues: readonly RuleIssue[];

  constructor(issues: readonly RuleIssue[]) {
    super(issues.map(formatIssue).join('; '));
    this.name = 'RuleError';
    this.issues = issues;
  }
}

/**
 * A mutation's failure as status, events and logs may show it. Template, patch and YAML errors can
 * quote the data they were working on, so for a Secret only where in the rule it failed is said.
 */
export function describeMutationFailure(err: RuleError, sourceIsSecret: boolean): string {
  if (!sourceIsSecret) return err.message;
  return err.issues.map((i) => `${i.path}: failed on this Secret (the details are withheld: they could quote its data)`).join('; ');
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
