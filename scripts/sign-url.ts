// `npm run sign-url -- [--key HEX --salt HEX] /rs:fit:320:0/plain/https://example.com/a.jpg`
// prints the signed path to append to thumbd's address: /i/<signature>/rs:fit:320:0/plain/...
// The key and salt come from the flags, else from the first pair of the server's own URL_SIGNING_KEYS and
// URL_SIGNING_SALTS, read as the server reads them (src/config.ts, from the environment and .env: the npm
// script loads .env as npm start does). The path is signed exactly as given: percent-encode the source URL
// yourself if it has '@', '?' or '#' (or use the base64url form).
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '../src/config.ts'
import { parseProcessingPath, UrlOptionError } from '../src/signed-urls/parse.ts'
import { fromHex, signedUrlPath, type SigningKey } from '../src/signed-urls/signature.ts'

const USAGE = 'usage: npm run sign-url -- [--key HEX --salt HEX] /<options>/plain/<source URL>[@ext]'
const NO_KEY = 'no key and salt: set URL_SIGNING_KEYS and URL_SIGNING_SALTS in .env (or the environment), e.g.\n' +
  '  echo "URL_SIGNING_KEYS=$(openssl rand -hex 32)" >> .env\n  echo "URL_SIGNING_SALTS=$(openssl rand -hex 32)" >> .env\n' +
  'or pass --key and --salt'

/** The pair to sign with, or why there is none. */
function signingPair (key: string | undefined, salt: string | undefined): SigningKey | string {
  try {
    if (key !== undefined && salt !== undefined) return { key: fromHex('--key', key), salt: fromHex('--salt', salt) }
    if (key !== undefined || salt !== undefined) return 'pass --key and --salt together, or neither (then URL_SIGNING_KEYS and URL_SIGNING_SALTS are used)'
    return loadConfig().urlSigning[0] ?? NO_KEY
  } catch (err) {
    return err instanceof ConfigError ? `invalid config: ${err.message}` : (err as Error).message
  }
}

function main (): number {
  let parsed
  try {
    parsed = parseArgs({ options: { key: { type: 'string' }, salt: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true })
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help === true || positionals.length !== 1) {
    console.error(USAGE)
    return values.help === true ? 0 : 2
  }
  const pair = signingPair(values.key, values.salt)
  if (typeof pair === 'string') {
    console.error(`${pair}\n${USAGE}`)
    return 2
  }
  const path = positionals[0]!.startsWith('/') ? positionals[0]! : `/${positionals[0]}`
  // Sign anyway, but say so now if thumbd would refuse the options (presets are not known here).
  try {
    parseProcessingPath(path)
  } catch (err) {
    if (!(err instanceof UrlOptionError)) throw err
    const note = err.message.startsWith('unknown preset') ? ' (presets live in the server\'s URL_PRESETS: fine if it has it)' : ''
    console.error(`warning: thumbd would refuse this path: ${err.message}${note}`)
  }
  console.log(signedUrlPath(path, pair.key, pair.salt))
  return 0
}

process.exitCode = main()
