#!/bin/sh
# browser.sh REPORT_FIXTURE WORKDIR - opens the fixture's index.html in headless
# Chromium (Debian's chromium package): the console must show no error from the
# page, and the screenshot must not be blank (python3 counts its distinct colours
# from the PNG with zlib alone). Label `browser`: skipped (77) without chromium.
set -u
fixture=$1
work=$2
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "SKIP: chromium is not installed (apt-get install chromium)"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
"$fixture" "$work" || { echo "FAIL: report_fixture exited $?"; exit 1; }
page="$work/report/index.html"
# --no-sandbox: CI containers run as root; the console goes to stderr at --v=0.
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --enable-logging=stderr --v=0 --window-size=1280,2000 \
    --screenshot="$work/shot.png" "file://$page" >"$work/chromium.out" 2>"$work/chromium.err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: chromium exited $rc"; cat "$work/chromium.err"; exit 1; }
# Console messages of the page look like: CONSOLE(12)] "..." / Uncaught ... / Failed to load
if grep -E 'CONSOLE|Uncaught|Failed to load resource|net::ERR_' "$work/chromium.err"; then
    echo "FAIL: the page wrote errors to the console (above)"
    exit 1
fi
python3 - "$work/shot.png" <<'PY' || exit 1
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat, w = 8, b'', 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
        assert depth == 8 and ctype in (2, 6), 'unexpected PNG format'
        bpp = 3 if ctype == 2 else 4
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
colours = set()
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):  # undo the PNG filters
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 4 == 0:
        for x in range(0, stride, bpp * 2):
            colours.add(bytes(line[x:x + 3]))
    prev = line
print('screenshot %dx%d, %d distinct colours' % (w, h, len(colours)))
if len(colours) < 16:
    sys.exit('FAIL: the screenshot looks blank')
PY
echo "PASS: $page opened without console errors; screenshot $work/shot.png"
