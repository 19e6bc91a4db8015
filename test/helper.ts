// Builds the real app (real pool, real sharp, real ffmpeg) for one test and closes it after.
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import type { TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import sharp from 'sharp'
import { buildApp, type BuildOptions } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { tempFolder } from './temp-folder.ts'

export const TEST_KEY = 'test-key-0123456789'
export const AUTH = { authorization: `Bearer ${TEST_KEY}` }

/** A TMP_DIR of this test process's own, so leaks are easy to see. */
export const TEST_TMP = tempFolder('thumbd-test-tmp-')

/**
 * The event-loop guard off: on a busy machine (other work on its 2 cores) the test process may get no turn of
 * its loop for a whole sample interval, which @fastify/under-pressure reads as an infinite delay (a NaN mean),
 * so a test asserting a 200 got the guard's 503 whatever its bound. No test relies on the guard through
 * build(); one that tests it sets its own PRESSURE_MAX_EVENT_LOOP_DELAY_MS.
 */
const BUSY_MACHINE_EVENT_LOOP_DELAY_MS = '0'

/**
 * Two minutes, not the default 30 s: job work runs at nice 10, so beside stress-ng --cpu 2 a decoder gets ~10 % of
 * a core and a 3 s video job takes 30 s (a phone's HLG preview got its 504 so). No test relies on the default
 * deadline through build(); one that tests the deadline sets its own JOB_TIMEOUT_MS.
 */
const BUSY_MACHINE_JOB_TIMEOUT_MS = '120000'

export async function build (t: TestContext, env: Record<string, string> = {}, options: BuildOptions = {}): Promise<FastifyInstance> {
  const config = loadConfig({ API_KEYS: TEST_KEY, LOG_LEVEL: 'silent', TMP_DIR: TEST_TMP, POOL_THREADS: '2', PRESSURE_MAX_EVENT_LOOP_DELAY_MS: BUSY_MACHINE_EVENT_LOOP_DELAY_MS, JOB_TIMEOUT_MS: BUSY_MACHINE_JOB_TIMEOUT_MS, ...env })
  const app = await buildApp(config, options)
  t.after(() => app.close())
  return app
}

/** Temp files this app still holds (there should be none between requests). */
export function leftoverTempFiles (app: FastifyInstance): string[] {
  return readdirSync(app.tempDir.path)
}

/** Everything in TEST_TMP (there should be nothing once the apps have closed). */
export function leftoverTestTmp (): string[] {
  return readdirSync(TEST_TMP)
}

export async function postMedia (app: FastifyInstance, route: string, body: Buffer, contentType = 'application/octet-stream', query = '') {
  return app.inject({ method: 'POST', url: `/api/${route}${query}`, headers: { ...AUTH, 'content-type': contentType }, payload: body })
}

/** A thumbnail that must succeed: 200, of the image type expected; its bytes. */
export async function thumbnailOf (app: FastifyInstance, body: Buffer, contentType: string, query = '', imageType = 'image/jpeg'): Promise<Buffer> {
  const res = await postMedia(app, 'thumbnail', body, contentType, query)
  assert.equal(res.statusCode, 200, `${query}: ${res.body}`)
  assert.equal(res.headers['content-type'], imageType, query)
  return res.rawPayload
}

export async function decoded (body: Buffer) {
  return sharp(body).metadata()
}
