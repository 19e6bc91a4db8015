import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkPresets, MAX_PATH_LENGTH, normalisedOptions, parseProcessingPath, redenormalizePath, resolveFit, UrlOptionError } from '../../src/signed-urls/parse.ts'

const SRC = 'https://img.example.com/a.jpg'
const parse = (path: string, presets?: Record<string, string>) => parseProcessingPath(path, presets)
const options = (opts: string, presets?: Record<string, string>) => parse(`/${opts}/plain/${SRC}`, presets).options
const b64 = (url: string) => Buffer.from(url).toString('base64url')

function refuses (path: string, message: RegExp, presets?: Record<string, string>) {
  assert.throws(() => parse(path, presets), (err: unknown) => {
    assert.ok(err instanceof UrlOptionError, `${path}: ${String(err)}`)
    assert.match(err.message, message, path)
    return true
  })
}

test('the signature vectors\' paths: source, extension, options', () => {
  assert.deepEqual(parse('/rs:fit:300:300/plain/http://img.example.com/pretty/image.jpg'), {
    source: 'http://img.example.com/pretty/image.jpg',
    extension: undefined,
    options: { width: 300, height: 300, fit: 'inside', withoutEnlargement: true }
  })
  assert.deepEqual(parse('/rs:fit:320:0/q:80/plain/http://127.0.0.1:18081/dragonfly_4mp_baseline.jpg@jpg'), {
    source: 'http://127.0.0.1:18081/dragonfly_4mp_baseline.jpg',
    extension: 'jpg',
    options: { width: 320, fit: 'inside', withoutEnlargement: true, quality: 80, format: 'jpeg' }
  })
})

test('every alias means the same as its full name', () => {
  const pairs = [
    ['rs:fill:100:200:1', 'resize:fill:100:200:1'], ['s:100:200:1', 'size:100:200:1'], ['rt:force', 'resizing_type:force'],
    ['w:100', 'width:100'], ['h:100', 'height:100'], ['el:1', 'enlarge:1'], ['g:sm', 'gravity:sm'], ['q:50', 'quality:50'],
    ['f:webp', 'format:webp'], ['ext:webp', 'format:webp'], ['bg:ff0000', 'background:ff0000'], ['vts:5', 'video_thumbnail_second:5'],
    ['cb:v2', 'cachebuster:v2'], ['pr:small', 'preset:small']
  ]
  for (const [short, long] of pairs) assert.deepEqual(options(short!, { small: 'w:10' }), options(long!, { small: 'w:10' }), short)
})

test('resizing types map onto sharp fits; imgproxy\'s default is fit (inside), never enlarging', () => {
  assert.deepEqual(options('w:300'), { width: 300, fit: 'inside', withoutEnlargement: true })
  assert.equal(options('rs:fill:300:200').fit, 'cover')
  assert.equal(options('rs:fill-down:300:200').fit, 'cover')
  assert.equal(options('rs:force:300:200').fit, 'fill')
  assert.equal(options('rt:fit/w:10/h:10').fit, 'inside')
  assert.equal(options('rs:fill:300:200:1').withoutEnlargement, false)
  assert.equal(options('s:300:200:true/rt:fill-down').withoutEnlargement, false, 'fill-down with enlarge enlarges, as in imgproxy')
  assert.equal(options('el:0').withoutEnlargement, true)
  assert.deepEqual(options('rs::300'), { width: 300, fit: 'inside', withoutEnlargement: true }, 'empty arguments leave a setting alone')
  assert.deepEqual(options('s:0:0/q:0'), { fit: 'inside', withoutEnlargement: true }, '0 is auto/default')
  assert.deepEqual(options('s:300:200:0:0'), { width: 300, height: 200, fit: 'inside', withoutEnlargement: true }, 'extend:0 is what thumbd does')
})

test('rs:auto: fill or fit by orientation when both sides are given, plain fit otherwise', () => {
  const auto = options('rs:auto:300:200')
  assert.equal(auto.autoFit, true)
  assert.equal(resolveFit(auto, 4000, 3000), 'cover', 'landscape into landscape')
  assert.equal(resolveFit(auto, 3000, 4000), 'inside', 'portrait into landscape')
  assert.equal(resolveFit(auto, 1000, 1000), 'cover', 'square counts as landscape')
  assert.equal(resolveFit(options('rs:auto:200:300'), 3000, 4000), 'cover')
  assert.deepEqual(options('rs:auto:300:0'), options('rs:fit:300'))
  assert.equal(resolveFit(options('rs:fill:300:200'), 3000, 4000), 'cover')
})

test('gravities map onto sharp positions; sm is attention', () => {
  const expected = { ce: 'centre', no: 'north', so: 'south', ea: 'east', we: 'west', noea: 'northeast', nowe: 'northwest', soea: 'southeast', sowe: 'southwest', sm: 'attention' }
  for (const [g, position] of Object.entries(expected)) assert.equal(options(`rs:fill:10:10/g:${g}`).position, position, g)
  assert.equal(options('g:no:0:0').position, 'north', 'zero offsets are no offsets')
})

test('quality, format, background, video and cache-buster options', () => {
  assert.equal(options('q:1').quality, 1)
  assert.equal(options('q:100').quality, 100)
  for (const [f, format] of [['jpg', 'jpeg'], ['jpeg', 'jpeg'], ['png', 'png'], ['webp', 'webp'], ['avif', 'avif'], ['auto', 'auto'], ['JPG', 'jpeg']]) {
    assert.equal(options(`f:${f}`).format, format, f)
  }
  assert.equal(options('bg:FF8000').background, 'ff8000')
  assert.equal(options('bg:f80').background, 'ff8800')
  assert.equal(options('bg:255:128:0').background, 'ff8000')
  assert.equal(options('bg:', { default: 'bg:000000' }).background, undefined, 'empty unsets a preset\'s')
  assert.equal(options('vts:12.50').at, '12.5')
  assert.equal(options('at:12.5').at, '12.5')
  assert.equal(options('at:10p').at, '10%')
  assert.equal(options('at:0').at, '0')
  assert.equal(options('frame:best').frame, 'best')
  assert.equal(options('frame:exact').frame, 'exact')
  assert.equal(options('cb:abc').cacheBuster, 'abc')
})

test('presets: default first, then named ones in order, then the URL\'s own options', () => {
  const presets = { default: 'q:70/f:webp', thumb: 'rs:fill:320:180/g:sm', big: 'w:1000/q:90', nested: 'pr:thumb/q:60' }
  assert.deepEqual(parse(`/plain/${SRC}`, presets).options, { fit: 'inside', withoutEnlargement: true, quality: 70, format: 'webp' })
  assert.deepEqual(options('pr:thumb', presets), { width: 320, height: 180, fit: 'cover', position: 'attention', withoutEnlargement: true, quality: 70, format: 'webp' })
  assert.equal(options('pr:thumb/q:50', presets).quality, 50, 'explicit overrides the default preset')
  assert.equal(options('w:100/pr:big', presets).width, 100, 'explicit overrides a named preset wherever pr stands')
  assert.equal(options('pr:big:thumb', presets).width, 320, 'a later preset overrides an earlier one')
  assert.equal(options('pr:thumb:big', presets).width, 1000)
  assert.equal(options('pr:nested', presets).quality, 60, 'a preset\'s own options override the presets it names')
  assert.equal(options('pr:nested', presets).position, 'attention')
  assert.equal(parse(`/pr:thumb/plain/${SRC}@png`, presets).options.format, 'png', 'an extension overrides a preset\'s format')
  assert.doesNotThrow(() => checkPresets(presets))
  assert.throws(() => checkPresets({ bad: 'w:1/trim:2' }), /option "trim" is not supported/)
  assert.doesNotThrow(() => checkPresets({ twice: 'w:1/w:2' }), 'the later w wins')
})

test('plain and base64url forms of one URL parse alike, however the base64 is split', () => {
  const url = 'https://img.example.com/some/path/photo.png?size=large&v=2'
  const plain = parse(`/rs:fill:300:200/g:sm/plain/${encodeURIComponent(url)}@webp`)
  const encoded = b64(url)
  assert.deepEqual(parse(`/rs:fill:300:200/g:sm/${encoded}.webp`), plain)
  assert.deepEqual(parse(`/rs:fill:300:200/g:sm/${encoded.slice(0, 10)}/${encoded.slice(10, 30)}/${encoded.slice(30)}.webp`), plain)
  assert.deepEqual(parse(`/rs:fill:300:200/g:sm/${encoded}${'='.repeat(-encoded.length & 3)}.webp`), plain, 'padding is tolerated')
  assert.equal(plain.source, url)
  assert.equal(plain.extension, 'webp')
  // An unencoded plain URL is taken too, and '@' stays in it unless what follows reads as an extension.
  assert.equal(parse('/plain/https://img.example.com/u/photo@2x.png').source, 'https://img.example.com/u/photo@2x.png')
  assert.equal(parse('/plain/https://img.example.com/a%2520b.jpg').source, 'https://img.example.com/a%20b.jpg', 'decoded once')
  assert.equal(parse(`/plain/${SRC}@`).extension, undefined)
})

test('redenormalizePath undoes proxies\' rewrites as imgproxy does (its path tests)', () => {
  assert.equal(redenormalizePath('/rs:fill:300:200/plain/http://example.com/image.jpg'), '/rs:fill:300:200/plain/http://example.com/image.jpg')
  assert.equal(redenormalizePath('/rs:fill:300:200/plain/https:/example.com/path/to/image.jpg'), '/rs:fill:300:200/plain/https://example.com/path/to/image.jpg')
  assert.equal(redenormalizePath('/rs%3Afill%3A300%3A200/plain/https://example.com/path/to/image.jpg'), '/rs:fill:300:200/plain/https://example.com/path/to/image.jpg')
  assert.equal(redenormalizePath('/rs%3Afill%3A300%3A200/abc/abc'), '/rs:fill:300:200/abc/abc')
  assert.equal(redenormalizePath('/plain/https:/example.com/a%3Ab.jpg'), '/plain/https://example.com/a%3Ab.jpg', 'the source keeps its %3A')
  assert.equal(parse('/rs%3Afill%3A300%3A200/plain/https:/example.com/a.jpg').source, 'https://example.com/a.jpg')
})

test('unknown and unsupported options are refused by name', () => {
  refuses(`/w:100/foo:1/plain/${SRC}`, /unknown option "foo"/)
  for (const name of ['watermark', 'wm', 'trim', 't', 'pixelate', 'pix', 'raw', 'kcr', 'scp']) {
    refuses(`/${name}:1/plain/${SRC}`, new RegExp(`option "${name}" is not supported by thumbd`))
  }
  refuses(`/s:300:200:0:1:sm/plain/${SRC}`, /option "s": extend takes a plain gravity/)
})

test('image operations: gravity offsets and focus point, crop, rotate, flip, blur, sharpen, padding, extend', () => {
  assert.deepEqual(options('g:ea:20:0').gravity, { position: 'east', x: 20, y: 0 })
  assert.equal(options('g:ea:20:0').position, 'east')
  assert.deepEqual(options('g:fp:0.25:0.75').gravity, { focus: [0.25, 0.75] })
  assert.equal(options('g:ea:20:0/g:no').gravity, undefined, 'a later plain gravity drops the offsets')
  assert.deepEqual(options('c:300:200').crop, { width: 300, height: 200 })
  assert.deepEqual(options('c:0.5:0:nowe:10:5').crop, { width: 0.5, height: 0, gravity: { position: 'northwest', x: 10, y: 5 } })
  assert.equal(options('c:0:0').crop, undefined)
  assert.equal(options('rot:90').rotate, 90)
  assert.equal(options('rot:-90').rotate, 270)
  assert.equal(options('rot:360').rotate, undefined)
  assert.deepEqual(options('fl:1').flip, [true, false])
  assert.deepEqual(options('flip:0:t').flip, [false, true])
  assert.equal(options('bl:1.5').blur, 1.5)
  assert.equal(options('bl:0').blur, undefined)
  assert.equal(options('sh:0.7').sharpen, 0.7)
  assert.deepEqual(options('pd:10').padding, [10, 10, 10, 10])
  assert.deepEqual(options('pd:10:20').padding, [10, 20, 10, 20])
  assert.deepEqual(options('pd:1:2:3').padding, [1, 2, 3, 2])
  assert.deepEqual(options('pd:1:2:3:4').padding, [1, 2, 3, 4])
  assert.deepEqual(options('ex:1').extend, { position: 'centre', x: 0, y: 0 })
  assert.deepEqual(options('s:300:200:0:1:so').extend, { position: 'south', x: 0, y: 0 })
  assert.deepEqual(options('exar:1:ea:5:0').extendAspect, { position: 'east', x: 5, y: 0 })
  assert.equal(options('ex:0').extend, undefined)
  for (const [opts, message] of [
    ['rot:45', /option "rot": "45" is not a multiple of 90/], ['g:sm:10:0', /smart gravity takes no offsets/], ['g:fp:2:0', /option "g": "2" is not a number from 0 to 1/],
    ['c:-1:10', /option "c"/], ['c:10:10:sm', /option "c": crop takes a plain gravity/], ['fl:x', /option "fl"/], ['bl:101', /option "bl"/], ['pd:1:2:3:4:5', /option "pd": takes at most 4/],
    ['ex:1:fp:0.5:0.5', /option "ex": extend takes a plain gravity/], ['g:ce:1:2:3', /option "g": takes at most 3 arguments/]
  ] as const) refuses(`/${opts}/plain/${SRC}`, message)
})

test('a repeated option, or another that sets the same thing, overrides the earlier one (imgproxy\'s order)', () => {
  assert.equal(options('w:100/w:200').width, 200)
  assert.equal(options('w:100/width:200').width, 200)
  assert.equal(options('w:100/s:200').width, 200)
  assert.deepEqual(options('rs:fit:300:200/w:100/h:50'), { width: 100, height: 50, fit: 'inside', withoutEnlargement: true }, 'w/h after rs: the later wins')
  assert.deepEqual(options('w:100/h:50/rs:fill:300:200'), { width: 300, height: 200, fit: 'cover', withoutEnlargement: true })
  assert.equal(options('vts:1/at:2').at, '2')
  assert.equal(options('q:50/q:60').quality, 60)
  refuses(`/pr:a/pr:b/plain/${SRC}`, /option "pr" is repeated/, { a: 'w:1', b: 'w:2' })
})

test('imgproxy\'s scaling, output and URL options are read', () => {
  assert.equal(options('dpr:2').dpr, 2)
  assert.equal(options('dpr:1.5').dpr, 1.5)
  assert.equal(options('dpr:1').dpr, undefined, 'dpr 1 is the default')
  assert.deepEqual(options('z:1.5').zoom, [1.5, 1.5])
  assert.deepEqual(options('zoom:2:0.5').zoom, [2, 0.5])
  assert.equal(options('mw:100').minWidth, 100)
  assert.equal(options('min-height:100').minHeight, 100)
  assert.equal(options('rs:fill-down:300:200').fillDown, true)
  assert.deepEqual(options('sm:1/ar:t/strip_metadata:true/auto_rotate:1'), { fit: 'inside', withoutEnlargement: true }, 'what thumbd does anyway')
  assert.equal(options('exp:1700000000').expires, 1700000000)
  assert.equal(options('fn:my%20photo').filename, 'my photo')
  assert.equal(options(`fn:${Buffer.from('été').toString('base64url')}:1`).filename, 'été')
  assert.equal(options('att:1').attachment, true)
  assert.equal(options('att:0').attachment, undefined)
  assert.deepEqual(options('fq:jpeg:85:webp:70').formatQuality, { jpeg: 85, webp: 70 })
  assert.equal(options('mb:10000').maxBytes, 10000)
  assert.deepEqual(options('skp:jpg:png').skipProcessing, ['jpeg', 'png'])
  assert.equal(options('cb:abc/cachebuster:def').cacheBuster, 'def')
  for (const [opts, message] of [
    ['sm:0', /option "sm": thumbd always strips metadata/], ['ar:false', /option "ar": thumbd always rotates/], ['dpr:0', /option "dpr"/],
    ['dpr:9', /option "dpr": "9" is not a number over 0 and at most 8/], ['z:0', /option "z"/], ['exp:soon', /option "exp"/],
    ['fq:jpeg', /option "fq": takes pairs/], ['fq:gif:50', /option "fq": format "gif"/], ['fq:jpeg:101', /option "fq"/],
    ['mb:-1', /option "mb"/], ['skp:tiff', /option "skp": extension "tiff"/], ['fn:a%22b', /option "fn": a file name/]
  ] as const) refuses(`/${opts}/plain/${SRC}`, message)
})

test('values out of range or malformed are refused', () => {
  for (const [opts, message] of [
    ['w:8193', /option "w": "8193" is not a size from 0 \(auto\) to 8192/], ['h:-1', /option "h"/], ['w:1.5', /option "w"/], ['w:', /option "w"/],
    ['w:1:2', /option "w": takes at most 1 argument/], ['q:101', /option "q": "101" is not a quality/], ['q:abc', /option "q"/],
    ['rs:stretch:1:1', /resizing type "stretch" is not supported/], ['el:yes', /option "el": "yes" is not a boolean/],
    ['f:bmp', /format "bmp" is not supported/], ['f:best', /format "best" is not supported/],
    ['bg:256:0:0', /option "bg"/], ['bg:12345', /option "bg"/], ['bg:1:2', /option "bg"/],
    ['at:101p', /over 100%/], ['at:10%25', /option "at"/], ['vts:10p', /option "vts": "10p" is not seconds/], ['vts:abc', /option "vts"/],
    ['frame:middle', /frame "middle" is not supported/], ['g:sm:1', /smart gravity takes no offsets/], ['g:xx', /gravity "xx" is not supported/]
  ] as const) refuses(`/${opts}/plain/${SRC}`, message)
})

test('bad sources are refused', () => {
  refuses('/w:100/!!notbase64!!', /neither plain\/<URL> nor valid base64url/)
  refuses(`/w:100/${b64(SRC)}+`, /neither plain\/<URL> nor valid base64url/)
  refuses(`/w:100/${b64(SRC)}${'a'.repeat((5 - b64(SRC).length % 4) % 4)}`, /neither plain\/<URL> nor valid base64url/) // a length no base64 has
  refuses(`/w:100/${Buffer.from([0xff, 0xfe, 0x41]).toString('base64url')}`, /valid base64url/)
  refuses(`/w:100/${b64(SRC)}.jpg.png`, /more than one extension/)
  refuses('/w:100/plain/https://a.example/%E0%A4%A.jpg', /invalid percent-encoding/)
  refuses('/w:100/plain/https://a.example/%zz.jpg', /invalid percent-encoding/)
  refuses(`/plain/${encodeURIComponent(encodeURIComponent(SRC))}`, /percent-encoded twice/)
  for (const source of ['ftp://a.example/a.jpg', 'file:///etc/passwd', 'data:image/png;base64,AAAA', '/relative/a.jpg', 'a.example/a.jpg']) {
    refuses(`/plain/${source}`, /absolute http or https URL/)
    refuses(`/${b64(source)}`, /absolute http or https URL/)
  }
  refuses('/w:100/', /source URL is missing/)
  refuses('/w:100', /source URL is missing/)
  refuses('/', /source URL is missing/)
  refuses('/fit/300/300/sm/0/aHR0cDovL2EvYg', /basic URL format/)
  refuses(`/plain/${SRC}@bmp`, /^the extension "bmp" is not supported/)
  refuses(`/${b64(SRC)}.tiff`, /^the extension "tiff" is not supported/)
})

test('the URL is capped, before any parsing', () => {
  const long = `/w:100/plain/${SRC}?${'a'.repeat(MAX_PATH_LENGTH)}`
  refuses(long, /the URL is too long/)
  assert.doesNotThrow(() => parse(`/w:100/plain/https://a.example/${'a'.repeat(MAX_PATH_LENGTH - 40)}`))
})

test('presets that do not exist or include themselves are refused', () => {
  refuses(`/pr:nope/plain/${SRC}`, /unknown preset "nope"/)
  refuses(`/pr:constructor/plain/${SRC}`, /unknown preset "constructor"/)
  refuses(`/pr:a/plain/${SRC}`, /preset "a" includes itself/, { a: 'pr:b', b: 'pr:a' })
  refuses(`/plain/${SRC}`, /preset "default" has "oops", which is not an option/, { default: 'w:1/oops' })
})

test('the extension wins over a format option, as in imgproxy', () => {
  assert.equal(parse(`/f:png/plain/${SRC}@jpg`).options.format, 'jpeg')
  assert.equal(parse(`/f:auto/${b64(SRC)}.webp`).options.format, 'webp')
  assert.equal(parse(`/f:jpeg/plain/${SRC}@jpg`).options.format, 'jpeg')
  assert.equal(parse(`/${b64(SRC)}.avif`).options.format, 'avif')
})

test('normalisedOptions: equal for requests that give the same image, stable in key order', () => {
  const same = (paths: string[]) => {
    const tags = paths.map(p => JSON.stringify(normalisedOptions(options(p))))
    for (const tag of tags) assert.equal(tag, tags[0], `${paths.join(' vs ')}`)
  }
  same(['w:300', 's:300:0', 'rs:fit:300:0', 'rs:fill:300', 'rs:auto:300:0', 'rs:fill-down:300:0/g:sm', 'w:300/el:0', 'w:300/q:80', 'w:300/q:0'])
  same(['rs:fill:300:200', 'rs:fill:300:200/g:ce', 'w:300/h:200/rt:fill'])
  same(['h:50', 'rs:fit::50', 's:0:50'])
  const tag = (opts: string) => JSON.stringify(normalisedOptions(options(opts)))
  assert.notEqual(tag('w:300'), tag('w:301'))
  assert.notEqual(tag('rs:fill:300:200'), tag('rs:fit:300:200'))
  assert.notEqual(tag('rs:fill:300:200'), tag('rs:fill:300:200/g:sm'))
  assert.notEqual(tag('rs:auto:300:200'), tag('rs:fit:300:200'))
  assert.notEqual(tag('rs:fill-down:300:200'), tag('rs:fill:300:200'), 'they differ on a small source')
  assert.notEqual(tag('w:300'), tag('w:300/dpr:2'))
  assert.notEqual(tag('w:300'), tag('w:300/el:1'))
  assert.notEqual(tag('w:300'), tag('w:300/f:auto'))
  assert.notEqual(tag('w:300'), tag('w:300/cb:2'))
  assert.deepEqual(Object.keys(normalisedOptions(options('w:1'))), Object.keys(normalisedOptions(options('w:1'))).sort())
  assert.equal(normalisedOptions(options('w:1'), { quality: 75 }).quality, 75)
})

test('animation: gif as a format, da (disable_animation), vta (video_thumbnail_animation) as imgproxy Pro writes it', () => {
  assert.equal(options('f:gif').format, 'gif')
  assert.equal(parseProcessingPath(`/plain/${SRC}@gif`).options.format, 'gif')
  assert.equal(options('da:1').animated, false)
  assert.equal(options('disable_animation:0').animated, undefined)
  assert.deepEqual(options('vta:-1:200:6:160:0').preview, { delay: 200, frames: 6, frameWidth: 160, frameHeight: 0, fit: 'inside', trim: false })
  assert.deepEqual(options('vta:2.5:0:4:0:90:1:1:0:0.5:0.5').preview, { step: 2.5, delay: 100, frames: 4, frameWidth: 0, frameHeight: 90, fit: 'contain', trim: true })
  assert.equal(options('vta:1:100:4:96:96:1:0:1').preview?.fit, 'cover', 'fill wins over extend: the box is filled')
  assert.equal(options('vta:0:100:4:96:96').preview, undefined, 'step 0 is no animation, as imgproxy\'s default 0:0:0:0:0')
  for (const [opts, message] of [
    ['vta:1:100:0:96:0', /frames "0" is not a whole number from 1 to 100/], ['vta:1:100:101:96:0', /frames "101"/],
    ['vta:1:100:4:1921:0', /frame_width "1921"/], ['vta:1:100:4:8:0', /at least 16/], ['vta:1:5:4:96:0', /delay \(ms\) "5"/],
    ['vta:x:100:4:96:0', /step "x" is not seconds/], ['vta:1:100:4:96:0:0:0:1:0.2', /focus_x "0.2" is not supported/],
    ['vta:1:100:4:96:0:0:0:1:0.5:1', /focus_y "1" is not supported/], ['vta:1:100:4:96:0:0:0:0:0.5:0.5:9', /at most 10 arguments/],
    ['vta:1:100:4:96:0:maybe', /"maybe" is not a boolean/], ['da:yes', /"yes" is not a boolean/]
  ] as const) refuses(`/${opts}/plain/${SRC}`, message)
  refuses(`/vta:1:100:4:96:0/vtt:0:5:2:64:0/plain/${SRC}`, /cannot be combined/)
  // Set only when asked, so the tags of every other URL stay as they were.
  assert.deepEqual(Object.keys(normalisedOptions(options('w:1'))).filter(k => k === 'animated' || k === 'preview'), [])
  assert.notEqual(JSON.stringify(normalisedOptions(options('w:1/da:1'))), JSON.stringify(normalisedOptions(options('w:1'))))
})
