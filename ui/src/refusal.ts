/** The API's refusal of an action in words (the SDK's TimeshareError: code, message, param). */
import { TimeshareError } from '../../sdk/src/index.js';

/** Its message, naming the field once (validation messages already start with it). */
export function refusalText(err: Error): string {
  if (err instanceof TimeshareError && err.param && !err.message.startsWith(err.param))
    return `${err.param}: ${err.message}`;
  return err.message;
}

/** The refusal's message for the form field it names, without the name (it sits under the field). */
export function fieldError(err: Error | null, field: string): string | undefined {
  if (!(err instanceof TimeshareError) || err.param !== field) return undefined;
  return err.message.startsWith(`${field}: `) ? err.message.slice(field.length + 2) : err.message;
}

/** Whether the refusal names one of these fields (said there rather than above the form). */
export const namesField = (err: Error | null, fields: readonly string[]) =>
  err instanceof TimeshareError && err.param !== null && fields.includes(err.param);
