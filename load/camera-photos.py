# Camera-like JPEGs for `npm run bench -- --peer imgproxy=PATH --photos DIR/SET` (docs/benchmarks.md, "Photos
# against imgproxy"), made from real photos that Debian's lomiri-wallpapers-16.04/-20.04 ship: each cropped and
# scaled (Lanczos) to 1-24 MP and re-encoded by Pillow (libjpeg-turbo, standard Huffman tables as cameras write
# them) at 4:2:0, 4:2:2 or 4:4:4, baseline or progressive, with an sRGB (2.5 KB, 1024-entry curves) or Adobe RGB
# profile from icc-profiles-free, libvips' Display P3 (written by sharp), or none; EXIF with a thumbnail and XMP
# by exiftool.
#   apt-get install lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 icc-profiles-free python3-pil exiftool
#   /usr/bin/python3 load/camera-photos.py DIR      (one folder per set: key, chroma, profile, size)
import subprocess, sys, os, tempfile
from PIL import Image
OUT = sys.argv[1]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
P3 = os.path.join(tempfile.mkdtemp(), 'p3.icc')
subprocess.run([os.path.join(REPO, 'node_modules/.bin/node'), '-e', """
const sharp = require('sharp')
sharp({ create: { width: 8, height: 8, channels: 3, background: '#888' } }).jpeg().withIccProfile('p3').toBuffer()
  .then(b => sharp(b).metadata()).then(m => require('fs').writeFileSync(process.argv[1], m.icc))""", P3], cwd=REPO, check=True)
SRC = {'life': '/usr/share/backgrounds/life_by_Aitzol_Berasategi.jpg', 'picos': '/usr/share/backgrounds/picosdeeuropa_by_Aitzol_Berasategi.jpg',
       'kleiber': '/usr/share/backgrounds/Kleiber_by_Lukas_Baubkus.jpg'}
ICC = {'srgb': '/usr/share/color/icc/ghostscript/srgb.icc',
       'adobergb': '/usr/share/color/icc/compatibleWithAdobeRGB1998.icc',
       'p3': P3, 'none': None}
SUB = {'444': 0, '422': 1, '420': 2}
SIZES = {1: (1280, 800), 4: (2560, 1600), 12: (4000, 3000), 24: (6000, 4000)}
PHOTOS = [  # (set, MP, chroma, quality, profile, progressive, source)
  ('key', 4, '444', 75, 'srgb', False, 'life'),
  ('chroma', 4, '420', 90, 'srgb', False, 'life'),
  ('chroma', 4, '422', 90, 'srgb', False, 'life'),
  ('chroma', 4, '444', 90, 'srgb', False, 'life'),
  ('profile', 4, '420', 90, 'none', False, 'life'),
  ('profile', 4, '420', 90, 'adobergb', False, 'life'),
  ('profile', 4, '420', 90, 'p3', False, 'life'),
  ('size', 1, '420', 85, 'srgb', False, 'life'),
  ('size', 4, '422', 90, 'srgb', True, 'kleiber'),
  ('size', 12, '422', 92, 'adobergb', False, 'kleiber'),
  ('size', 12, '420', 90, 'p3', True, 'picos'),
  ('size', 24, '422', 92, 'srgb', False, 'kleiber'),
  ('size', 24, '444', 90, 'none', True, 'kleiber'),
]
cache = {}
for (group, mp, chroma, q, icc, prog, src) in PHOTOS:
    w, h = SIZES[mp]
    key = (src, w, h)
    if key not in cache:
        im = Image.open(SRC[src]).convert('RGB')
        sw, sh = im.size
        # crop to the target aspect, centred, then Lanczos (upscale for 24 MP from 20 MP)
        if sw / sh > w / h: cw, ch = round(sh * w / h), sh
        else: cw, ch = sw, round(sw * h / w)
        im = im.crop(((sw - cw) // 2, (sh - ch) // 2, (sw - cw) // 2 + cw, (sh - ch) // 2 + ch)).resize((w, h), Image.LANCZOS)
        cache[key] = im
    name = f"{mp:02d}mp-{chroma}-q{q}-{icc}-{'progressive' if prog else 'baseline'}-{src}.jpg"
    os.makedirs(f'{OUT}/{group}', exist_ok=True)
    path = f'{OUT}/{group}/{name}'
    kw = dict(quality=q, subsampling=SUB[chroma], progressive=prog, optimize=False)
    if ICC[icc]: kw['icc_profile'] = open(ICC[icc], 'rb').read()
    cache[key].save(path, 'JPEG', **kw)
    thumb = f'{OUT}/.thumb.jpg'
    cache[key].resize((160, 120 if w / h < 1.5 else 106)).save(thumb, 'JPEG', quality=80)
    subprocess.run(['exiftool', '-q', '-overwrite_original', '-Make=Canon', '-Model=Canon EOS 80D', '-Orientation#=1',
      '-DateTimeOriginal=2024:06:01 10:20:30', '-ExposureTime=1/250', '-FNumber=5.6', '-ISO=200', '-FocalLength=35',
      '-LensModel=EF-S18-135mm f/3.5-5.6 IS USM', '-XResolution=72', '-YResolution=72', '-ExifImageWidth=%d' % w,
      '-ExifImageHeight=%d' % h, '-XMP-xmp:CreatorTool=Camera firmware 1.0.2', '-XMP-dc:Creator=bench',
      '-XMP-xmp:Rating=3', '-XMP-photoshop:DateCreated=2024:06:01 10:20:30', f'-ThumbnailImage<={thumb}', path], check=True)
    os.remove(thumb)
    print(path, os.path.getsize(path))
