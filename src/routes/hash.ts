import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { codeOf, ThumbdError } from '../errors.ts'
import { ERROR_TABLE, type ErrorSpec } from '../../contract/error-codes.ts'
import { jobSource } from '../plugins/sources.ts'
import type { DigestAlgorithm } from '../sources/spool.ts'
import { HashQuery, digestAlgorithms, videoOptions } from './options.ts'
import { jobRoute } from './schemas.ts'
import type { PerceptualResult } from '../../contract/types.ts'

const Options = Type.Object(HashQuery, { additionalProperties: false })

const hex = (name: string) => Type.Optional(Type.String({ description: `hex ${name}` }))

const HashReply = Type.Object({
  size: Type.Integer({ description: 'bytes received' }),
  type: Type.Union([Type.Object({ kind: Type.Enum(['image', 'video', 'audio']), format: Type.String(), mime: Type.String() }), Type.Null()], { description: 'sniffed from the bytes; null when no media thumbd reads' }),
  digests: Type.Object({
    sha256: hex('SHA-256'),
    sha512: hex('SHA-512'),
    sha1: hex('SHA-1'),
    md5: hex('MD5'),
    blake2b512: hex('BLAKE2b-512'),
    'sha3-256': hex('SHA3-256')
  }, { additionalProperties: false, description: 'digests of the exact bytes received, those asked for' }),
  perceptual: Type.Union([Type.Object({
    phash: Type.String({ description: '64-bit DCT perceptual hash, hex; compare by Hamming distance' }),
    thumbhash: Type.String({ description: 'ThumbHash placeholder, base64' }),
    thumbhashDataUrl: Type.String({ description: 'the placeholder as a PNG data URL' }),
    width: Type.Integer(),
    height: Type.Integer()
  }), Type.Null()]),
  perceptualSkipped: Type.Optional(Type.String({ description: 'why perceptual is null' }))
})

/** A refusal of the perceptual job that is about the media: reported in the reply rather than as an error. */
const refusesMedia = (err: unknown): err is ThumbdError => err instanceof ThumbdError && (ERROR_TABLE[codeOf(err)] as ErrorSpec).media === true

const DOC = {
  summary: 'Digests of the source bytes, plus perceptual hash and ThumbHash placeholder of images and videos',
  description: 'Any bytes get digests; perceptual fields are null (with perceptualSkipped saying why) for bytes that are no decodable image or video.'
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/hash', jobRoute('perceptual', { ...DOC, options: Options, ok: HashReply }), async (request, reply) => {
    const { source, options } = await app.sources.take(request, reply, Options, {
      algorithms: options => digestAlgorithms(options.algorithms),
      anyBytes: true
    })
    const wanted = digestAlgorithms(options.algorithms)
    const digests = Object.fromEntries(wanted.map(a => [a, source.digests[a]])) as Partial<Record<DigestAlgorithm, string>>
    const { media } = source
    let perceptual: PerceptualResult | null = null
    let perceptualSkipped: string | undefined
    if (media === undefined) {
      perceptualSkipped = 'not an image or video format thumbd reads'
    } else if (media.kind !== 'image' && !app.mediaTools.video) {
      perceptualSkipped = 'video decoding is not available on this host'
    } else {
      // Default for videos: the most representative frame near `at`.
      const video = { ...videoOptions(options), best: options.frame !== 'exact' }
      try {
        perceptual = (await app.jobs.run({ kind: 'perceptual', source: jobSource(source), video }, request.jobOptions)).value
      } catch (err) {
        if (!refusesMedia(err)) throw err
        perceptualSkipped = err.message
      }
    }
    return reply.send({
      size: source.size,
      type: media === undefined ? null : { kind: media.kind, format: media.format, mime: media.mime },
      digests,
      perceptual,
      ...(perceptualSkipped === undefined ? {} : { perceptualSkipped })
    })
  })
}

export default routes
