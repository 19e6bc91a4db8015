// Every refusal of a route's options, whatever carried them (query string, JSON body, multipart fields), in
// one shape: it names the option and says what it accepts (src/schema-errors.ts). Fastify calls this for its
// own validation (the app's schemaErrorFormatter); plugins/sources.ts for multipart fields.
import { errors, type ThumbdError } from '../errors.ts'
import { describeSchemaErrors, type SchemaError } from '../schema-errors.ts'

export function optionsError (validation: readonly SchemaError[] | null | undefined, _context?: string): ThumbdError {
  return new errors.BadOptions(describeSchemaErrors(validation, { noun: 'option' }))
}
