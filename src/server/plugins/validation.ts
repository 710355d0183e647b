import AjvModule, {type ErrorObject} from 'ajv'
import addFormats from 'ajv-formats'
import type {FastifyInstance, FastifySchemaCompiler} from 'fastify'

// ajv is CommonJS; under NodeNext its class is the default export's `default`.
const Ajv = AjvModule.default

/**
 * Bodies are validated as sent: no type coercion and no silent removal of unknown fields, so a
 * bad body is a clear 400 instead of a quiet misreading. Query strings and path parameters are
 * text on the wire, so those are coerced to the declared types.
 */
export function installValidation(app: FastifyInstance) {
  const strict = new Ajv({allErrors: true, coerceTypes: false, removeAdditional: false, useDefaults: true, strict: false})
  const lenient = new Ajv({allErrors: true, coerceTypes: 'array', removeAdditional: false, useDefaults: true, strict: false})
  addFormats.default(strict)
  addFormats.default(lenient)
  const compiler: FastifySchemaCompiler<unknown> = ({schema, httpPart}) => {
    const ajv = httpPart === 'body' ? strict : lenient
    return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>
  }
  app.setValidatorCompiler(compiler)
}

/** Ajv errors as `{path, message}` pairs, with paths like `body.name` or `querystring.limit`. */
export function fieldsOf(errors: ErrorObject[], part: string): Array<{path: string; message: string}> {
  return errors.map((e) => {
    let path = e.instancePath.replace(/^\//, '').replace(/\//g, '.')
    if (e.keyword === 'required') path = [path, (e.params as {missingProperty: string}).missingProperty].filter(Boolean).join('.')
    if (e.keyword === 'additionalProperties') path = [path, (e.params as {additionalProperty: string}).additionalProperty].filter(Boolean).join('.')
    const message =
      e.keyword === 'additionalProperties' ? 'is not a known field'
      : e.keyword === 'required' ? 'is required'
      // Name the values a caller may send instead of Ajv's "must be equal to one of the allowed values".
      : e.keyword === 'enum' ? `must be one of: ${(e.params as {allowedValues: unknown[]}).allowedValues.join(', ')}`
      : (e.message ?? 'is invalid')
    return {path: [part, path].filter(Boolean).join('.'), message}
  })
}
