// `npm run sign-url -- [--key HEX --salt HEX] /rs:fit:320:0/plain/https://example.com/a.jpg`
// prints the signed path to append to thumbd's address: /i/<signature>/rs:fit:320:0/plain/...
// The key and salt come from the flags, else from the first pair of URL_SIGNING_KEYS / URL_SIGNING_SALTS
// (the server's own variables, so a shell that runs thumbd can sign for it). The path is signed exactly as
// given: percent-encode the source URL yourself if it has '@', '?' or '#' (or use the base64url form).
import { parseArgs } from 'node:util'
import { parseProcessingPath, UrlOptionError } from '../src/signed-urls/parse.ts'
import { parseSigningKeys, signedUrlPath } from '../src/signed-urls/signature.ts'

const USAGE = 'usage: npm run sign-url -- [--key HEX --salt HEX] /<options>/plain/<source URL>[@ext]'

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
  const key = values.key ?? process.env.URL_SIGNING_KEYS?.split(',')[0]
  const salt = values.salt ?? process.env.URL_SIGNING_SALTS?.split(',')[0]
  if (key === undefined || salt === undefined) {
    console.error(`no key/salt: pass --key and --salt, or set URL_SIGNING_KEYS and URL_SIGNING_SALTS\n${USAGE}`)
    return 2
  }
  let pair
  try {
    [pair] = parseSigningKeys([key], [salt])
  } catch (err) {
    console.error((err as Error).message)
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
  console.log(signedUrlPath(path, pair!.key, pair!.salt))
  return 0
}

process.exitCode = main()
