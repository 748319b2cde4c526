/**
 * A template parse or execution error. The message carries the position the way Go does:
 * `template: NAME:LINE: ...` for parse errors and
 * `template: NAME:LINE:COL: executing "NAME" at <NODE>: ...` for execution errors.
 */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}
