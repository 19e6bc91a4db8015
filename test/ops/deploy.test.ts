// The deployment files must agree with the app: probe paths, port, env names, config table.
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { test } from 'node:test'
import { parseAllDocuments } from 'yaml'
import { CONFIG_SCHEMA } from '../../src/config-schema.ts'
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../src/node-flags.ts'
import { build } from '../helper.ts'

const root = new URL('../../', import.meta.url)
const read = (path: string) => readFileSync(new URL(path, root), 'utf8')
const schemaVars = CONFIG_SCHEMA.properties as Record<string, { default?: unknown }>

function manifests () {
  const dir = new URL('deploy/kubernetes/', root)
  return readdirSync(dir).filter(f => f.endsWith('.yaml')).flatMap(f => parseAllDocuments(readFileSync(new URL(f, dir), 'utf8')).map(d => d.toJS()))
}

test('Kubernetes manifests match the app: probes, port, env, drain, security', async (t) => {
  const all = manifests()
  const kinds = all.map(m => m.kind).sort()
  assert.deepEqual(kinds, ['Deployment', 'HorizontalPodAutoscaler', 'Kustomization', 'PodDisruptionBudget', 'Secret', 'Service'])
  const deployment = all.find(m => m.kind === 'Deployment')
  const pod = deployment.spec.template.spec
  const [container] = pod.containers
  const env = Object.fromEntries(container.env.map((e: { name: string, value?: string }) => [e.name, e.value]))
  for (const name of Object.keys(env)) assert.ok(name in schemaVars, `env ${name} is a config variable`)
  assert.equal(container.ports[0].containerPort, Number(env.PORT))
  assert.equal(container.env.find((e: { name: string }) => e.name === 'API_KEYS').valueFrom.secretKeyRef.name, 'thumbd')

  const app = await build(t)
  for (const [probe, path] of [['startupProbe', '/health'], ['readinessProbe', '/health'], ['livenessProbe', '/health/live']]) {
    assert.equal(container[probe].httpGet.path, path, probe)
    assert.equal((await app.inject({ url: path })).statusCode, 200, `${probe} path answers`)
  }
  const grace = Number(env.SHUTDOWN_GRACE_MS) / 1000 + container.lifecycle.preStop.sleep.seconds
  assert.ok(pod.terminationGracePeriodSeconds > grace, 'the pod is not killed before it has drained')
  assert.equal(pod.securityContext.runAsNonRoot, true)
  assert.equal(container.securityContext.readOnlyRootFilesystem, true)
  const tmp = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === env.TMP_DIR)
  assert.ok(pod.volumes.find((v: { name: string, emptyDir?: unknown }) => v.name === tmp.name && v.emptyDir), 'TMP_DIR is an emptyDir')

  const service = all.find(m => m.kind === 'Service')
  assert.equal(service.spec.ports[0].targetPort, container.ports[0].name)
  assert.deepEqual(service.spec.selector, deployment.spec.selector.matchLabels)
})

test('docs/configuration.md lists every variable with its default, and the README\'s short table only real ones', () => {
  const reference = read('docs/configuration.md')
  const rows = [...reference.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|/gm)].map(m => [m[1]!, m[2]!.trim()] as const)
  assert.deepEqual(rows.map(r => r[0]).sort(), Object.keys(schemaVars).sort())
  for (const [name, shown] of rows) {
    const value = String(schemaVars[name]!.default)
    if (value !== '' && value !== '0') assert.ok(shown.includes(value), `${name}: docs/configuration.md shows "${shown}", default is "${value}"`)
  }
  const readme = read('README.md')
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 5))
  const named = [...section.matchAll(/^\| `([A-Z][A-Z0-9_]*)`/gm)].map(m => m[1]!)
  assert.ok(named.length >= 10, 'the README names the variables most set')
  for (const name of named) assert.ok(name in schemaVars, `README names ${name}, a config variable`)
  assert.match(section, /\(docs\/configuration\.md\)/, 'the README links the reference')
})

test('docs/configuration.md gives every bound: each maximum, and each minimum above 1', () => {
  const readme = read('docs/configuration.md')
  for (const [name, schema] of Object.entries(schemaVars as Record<string, { maximum?: number, minimum?: number }>)) {
    const row = readme.split('\n').find(line => line.startsWith(`| \`${name}\` |`)) ?? ''
    if (schema.maximum !== undefined && name !== 'PORT') assert.match(row, /at most|\d \S* ?to \d/, `${name}'s maximum (${schema.maximum}) is documented`)
    if ((schema.minimum ?? 0) > 1) assert.match(row, /\d+ (ms|s) to /, `${name}'s minimum (${schema.minimum}) is documented`)
  }
})

test('the Dockerfile runs the server as npm start does, as non-root, with its ffmpeg and a health check', () => {
  const dockerfile = read('Dockerfile')
  assert.match(dockerfile, /^FROM node:24-bookworm-slim/m)
  // ffmpeg built from Debian's source package in a build stage (scripts/build-ffmpeg.sh); both tools reach the image.
  assert.match(dockerfile, /apt-get source --only-source ffmpeg/)
  assert.match(dockerfile, /^COPY --from=ffmpeg \S+\/ffmpeg \S+\/ffprobe \/usr\/local\/bin\/$/m)
  assert.match(dockerfile, /npm ci --omit=dev/)
  assert.match(dockerfile, /^USER node$/m)
  assert.match(dockerfile, /^HEALTHCHECK .*\n?.*\/health\/live/m)
  assert.deepEqual(JSON.parse(/^CMD (\[.+\])$/m.exec(dockerfile)![1]!), ['node', ...SERVER_NODE_FLAGS, 'src/server.ts'])
  const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start
  assert.ok(start.includes(` node ${SERVER_NODE_FLAGS.join(' ')} `), 'npm start passes the same Node flags')
  const envPairs = [...dockerfile.replace(/\\\n/g, ' ').matchAll(/^ENV (.+)$/gm)].flatMap(m => m[1]!.trim().split(/\s+/))
  for (const [name, value] of Object.entries(SERVER_ENV)) {
    assert.ok(envPairs.includes(`${name}=${value}`), `the image sets ${name}`)
    // Among the assignments before `node`: npm start sets it unless it is set.
    assert.ok(start.slice(0, start.indexOf(' node ')).split(' ').includes(`${name}=\${${name}:-${value}}`), `npm start sets ${name} unless it is set`)
  }
  assert.match(dockerfile, /^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m)
})
