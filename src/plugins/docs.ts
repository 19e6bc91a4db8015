// OpenAPI 3 generated from the route schemas: GET /openapi.json, and a browsable UI at GET /docs.
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'
import { ErrorReply } from '../routes/schemas.ts'

const binary = { schema: { type: 'string', format: 'binary' } }
/** Raw and multipart bodies stream past validation (see plugins/sources.ts), so they are added to the document only. */
const MEDIA_BODIES = {
  'image/*': binary,
  'video/*': binary,
  'audio/*': binary,
  'application/octet-stream': binary,
  'multipart/form-data': {
    schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary', description: 'the media; option fields go before it' } } }
  }
}

export default fp(async (app) => {
  app.addSchema(ErrorReply)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'thumbd',
        version: '0.1.0',
        description: 'Thumbnails, resizes, hashes and placeholders for untrusted images and videos. Sources: a raw body, a multipart "file" part, or JSON {"url": ...}.'
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } }
    },
    transform: ({ schema, url }) => {
      const body = (schema as { body?: { content?: Record<string, unknown> } } | undefined)?.body
      if (body?.content === undefined) return { schema, url }
      return { schema: { ...schema, body: { ...body, content: { ...body.content, ...MEDIA_BODIES } } }, url }
    }
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}, { name: 'docs' })
