// One line per schema refusal that names what was wrong and what is accepted, for the options of every route
// (query, JSON body, multipart fields) and for the config variables alike: "unknown option "widht"; the
// options are: width, height, …", "format must be one of jpeg, png, webp, avif, auto (got "gif")". Built from
// ajv's error objects (keyword, params, and with ajv's `verbose` the failing schema and value), so a route's
// schema is its own documentation and no route formats its errors.

/** The parts of a JSON schema this describes. */
interface Schema {
  type?: string
  enum?: readonly unknown[]
  const?: unknown
  anyOf?: readonly Schema[]
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  minLength?: number
  maxLength?: number
  description?: string
  properties?: Record<string, Schema>
}

/** An ajv error object; parentSchema and data are there when ajv runs with `verbose: true`. */
export interface SchemaError {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
  parentSchema?: object
  data?: unknown
}

export interface Naming {
  /** What a name is called: "option", "variable". */
  noun: string
  /** The schema of a name, where errors do not carry it (an ajv without `verbose`). */
  schemaOf?: (name: string) => object | undefined
  /** The value given for a name, likewise. */
  valueOf?: (name: string) => unknown
}

/** What a schema accepts, in words: its allowed values, its range, or its description (or, for a string too short or long, its length). */
export function accepts (schema: Schema, lengthOnly = false): string {
  const values = schema.enum ?? schema.anyOf?.flatMap(branch => 'const' in branch ? [branch.const] : [])
  if (values !== undefined && values.length > 0) return `one of ${values.join(', ')}`
  if (schema.type === 'boolean') return 'true or false'
  if (schema.type === 'integer' || schema.type === 'number') return `${schema.type === 'integer' ? 'an integer' : 'a number'}${range(schema)}`
  if (schema.description !== undefined && !lengthOnly) return schema.description
  if (schema.minLength !== undefined || schema.maxLength !== undefined) return `a string of ${length(schema)} characters`
  return `a ${schema.type ?? 'value'}`
}

function length ({ minLength, maxLength }: Schema): string {
  if (maxLength === undefined) return `at least ${minLength}`
  return minLength === undefined ? `at most ${maxLength}` : `${minLength} to ${maxLength}`
}

function range ({ minimum, maximum, exclusiveMinimum }: Schema): string {
  const low = minimum === undefined ? exclusiveMinimum === undefined ? '' : `above ${exclusiveMinimum}` : `from ${minimum}`
  if (maximum === undefined) return low === '' ? '' : ` ${low.replace('from', 'of at least')}`
  return low === '' ? ` of at most ${maximum}` : minimum === undefined ? ` ${low}, at most ${maximum}` : ` ${low} to ${maximum}`
}

/** Longest piece of the client's own text a message repeats: a 60 KB value must not come back (or reach the log) whole. */
const ECHO_CHARS = 64

/** The client's text as JSON (quoted, control characters escaped, so it cannot forge a log line), cut to ECHO_CHARS. */
function echo (value: unknown): string {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > ECHO_CHARS ? `${text.slice(0, ECHO_CHARS)}…` : text
}

/**
 * The first refusal of a validation, in one line. Of several errors at one place (a union's branches, then
 * the union), the last one is described: its schema is the whole union.
 */
export function describeSchemaErrors (errors: readonly SchemaError[] | null | undefined, naming: Naming): string {
  const first = errors?.[0]
  if (first === undefined) return `invalid ${naming.noun}s`
  const error = errors!.findLast(e => e.instancePath === first.instancePath) ?? first
  const object = error.parentSchema as Schema | undefined
  if (error.keyword === 'additionalProperties') {
    const known = Object.keys(object?.properties ?? {})
    const list = known.length === 0 ? `no ${naming.noun}s are taken here` : `the ${naming.noun}s are: ${known.join(', ')}`
    return `unknown ${naming.noun} ${echo(error.params.additionalProperty)}; ${list}`
  }
  if (error.keyword === 'required') {
    const name = String(error.params.missingProperty)
    const schema = object?.properties?.[name] ?? naming.schemaOf?.(name) as Schema | undefined
    return `${name} is missing${schema === undefined ? '' : `: it must be ${accepts(schema)}`}`
  }
  const name = error.instancePath.replace(/^\//, '').split('/')[0] || naming.noun
  const schema = naming.schemaOf?.(name) as Schema | undefined ?? object
  const value = 'data' in error ? error.data : naming.valueOf?.(name)
  const got = value === undefined ? '' : ` (got ${echo(value)})`
  const lengthOnly = error.keyword === 'minLength' || error.keyword === 'maxLength'
  return `${name} must be ${schema === undefined ? error.message ?? 'valid' : accepts(schema, lengthOnly)}${got}`
}
