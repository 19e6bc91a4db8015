// POST /api/jobs, GET and DELETE /api/jobs/{id}: routes that only enqueue and read state; the work is the
// engine's workers' (src/batch/workers.ts), on capacity that requests leave.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type, type Static } from 'typebox'
import { errors } from '../errors.ts'
import { ownerOf } from '../batch/ids.ts'
import { JobRequestBody, JobRequestFieldsSchema, type JobRequest } from '../batch/spec.ts'
import { optionsError } from './options-error.ts'
import { errorResponses } from './schemas.ts'

const File = Type.Object({ location: Type.String(), size: Type.Integer(), etag: Type.Optional(Type.String()), contentType: Type.String() })
const JobError = Type.Object({ code: Type.String(), message: Type.String() })
const JobStatus = Type.Object({
  id: Type.String({ format: 'uuid' }),
  state: Type.Enum(['queued', 'running', 'done', 'failed', 'cancelled']),
  attempts: Type.Integer({ description: 'attempts begun (a replica killed mid-job costs one)' }),
  progress: Type.Object({ done: Type.Integer({ description: 'outputs written or refused' }), total: Type.Integer() }),
  createdAt: Type.String({ format: 'date-time' }),
  startedAt: Type.Optional(Type.String({ format: 'date-time' })),
  completedAt: Type.Optional(Type.String({ format: 'date-time' })),
  outputs: Type.Array(Type.Object({ name: Type.String(), kind: Type.String(), files: Type.Optional(Type.Array(File)), error: Type.Optional(JobError) })),
  manifest: Type.Optional(File),
  error: Type.Optional(JobError)
})
const Accepted = Type.Object({ id: Type.String({ format: 'uuid' }), status: Type.String({ description: 'the status URL (also in Location)' }) })
const Params = Type.Object({ id: Type.String({ maxLength: 64 }) })
/** A multipart upload carries its job as one JSON field before the file (multipart fields are at most 1 KB). */
const UploadFields = Type.Object({ job: Type.String({ minLength: 2, maxLength: 1024 }) }, { additionalProperties: false })
const IDEMPOTENCY = Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'the same key with the same request gives the same job; with another request, 409 THUMBD_JOB_CONFLICT' })) })

const errorsOf = errorResponses(['NOT_FOUND', 'BAD_SIGNATURE', 'URL_EXPIRED', 'REQUEST_TIMEOUT'])
const schema = (summary: string, description: string, extra: object) => ({ summary, description, tags: ['async jobs'], security: [{ bearer: [] }], ...extra })

/** The key that made a job is who may see it: the bearer key, authenticated already. */
const ownerOfRequest = (request: FastifyRequest) => ownerOf(/^Bearer\s+(\S+)/i.exec(request.headers.authorization ?? '')![1]!)

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/jobs', {
    schema: schema('Submit an asynchronous job: one source, several outputs, written to a destination', 'JSON `{"source": {"url"}, "destination", "outputs", "webhook"}`, or a multipart upload: a field `job` (that JSON without source) before the part `file`. Answers 202 at once; the job runs on capacity that requests leave. An upload waits in the destination (`.thumbd-upload-<id>`) until its job ends.', {
      headers: IDEMPOTENCY,
      body: { content: { 'application/json': { schema: JobRequestBody } } },
      response: { 202: Accepted, ...errorsOf }
    })
  }, async (request, reply) => {
    const owner = ownerOfRequest(request)
    const header = request.headers['idempotency-key']
    const idempotencyKey = Array.isArray(header) ? header[0] : header
    let submitted
    if (request.isMultipart()) {
      const { source, options } = await app.sources.take(request, reply, UploadFields)
      let fields: unknown
      try {
        fields = JSON.parse(options.job)
      } catch {
        throw new errors.BadOptions('the job field is not JSON')
      }
      const check = request.compileValidationSchema(JobRequestFieldsSchema)
      if (!check(fields)) throw optionsError(check.errors)
      submitted = await app.batch.submit({ owner, request: fields as Static<typeof JobRequestFieldsSchema>, idempotencyKey, upload: source })
    } else {
      if (request.body === undefined || request.body === null || typeof request.body !== 'object') throw new errors.BadOptions('send the job as JSON, or as a multipart upload with a job field')
      submitted = await app.batch.submit({ owner, request: request.body as JobRequest, idempotencyKey })
    }
    const status = `/api/jobs/${submitted.id}`
    if (!submitted.created) reply.header('idempotent-replayed', 'true')
    return reply.code(202).header('location', status).send({ id: submitted.id, status })
  })

  app.get('/jobs/:id', {
    schema: schema('A job\'s state, progress and outputs', 'Only for the key that made it (404 THUMBD_JOB_NOT_FOUND otherwise). Each output: its files (location, size, ETag) or its error. manifest.json is written last.', { params: Params, response: { 200: JobStatus, ...errorsOf } })
  }, async (request) => app.batch.status(ownerOfRequest(request), (request.params as { id: string }).id))

  app.delete('/jobs/:id', {
    schema: schema('Cancel a job', 'A queued job never runs; a running one stops within half a lease (JOB_LEASE_SECONDS). Outputs already written stay. Answers the job\'s state.', { params: Params, response: { 200: JobStatus, ...errorsOf } })
  }, async (request) => app.batch.cancel(ownerOfRequest(request), (request.params as { id: string }).id))
}

export default routes
