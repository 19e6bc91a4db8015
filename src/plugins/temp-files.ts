import fp from 'fastify-plugin'
import type { Config } from '../config.ts'
import { TempDir } from '../sources/temp-dir.ts'

declare module 'fastify' {
  interface FastifyInstance {
    tempDir: TempDir
  }
}

export default fp<{ config: Config }>(async (app, { config }) => {
  const tempDir = await TempDir.create(config.tmpDir)
  app.decorate('tempDir', tempDir)
  // Last to go at shutdown: after the pool has stopped, nothing can still be reading these files.
  app.addHook('onClose', () => tempDir.destroy())
}, { name: 'temp-files' })
