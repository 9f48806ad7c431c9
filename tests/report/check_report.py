#!/usr/bin/env python3
"""check_report.py ROOFKIT DB OUTDIR - makes the report of DB with the roofkit
command and checks its content against the database, read back through
`roofkit export` (so the check needs no SQL of its own):

  C1 `roofkit report` succeeds (or says gnuplot is missing: exit 11)
  C2 the measurement tables (csv/measurements-*.csv) hold one row per measurement,
     each id once, and their shape, kernel and times equal the database's
  C3 each prediction's time and bound equal the database's
  C4 the HTML measurement tables have as many rows as the CSV ones
  C5 every SVG (plots/*.svg and each one inlined in index.html) is well-formed XML;
     the page loads nothing from the network and has no script
  C6 the overview (csv/top-kernels-d<ID>.csv, the kernels that take the most time under each
     device's roofline) equals the database: each entry's launches (one kernel name, shape,
     precision and parameters on the device), summed median time, share of the device's time,
     time-weighted % of roof (the measurement tables'), summed prediction of the model its
     header names and error; the 10 that take the most time, in order; the page shows the
     roofline before the first table, and every point of it has a title and a link to a row
  C7 the selection on the command line: a capture, family or kernel the database does not hold
     is refused with exit 2 and one error line, nothing written; --family F reports F alone
  C8 the TSM2/ISM2 and cuBLAS tables' effective GB/s is (mk + kn + mn) x element size over the
     median time; a kernel's speedup over cuBLAS is its reference's median time over its own,
     the reference being the fastest verified cuBLAS call of its capture, device, precision,
     shape and cache state that is not TF32 (none: both cells empty)
  C10 the TSM2/ISM2 tables' floor: the fastest verified move (the shape's bytes alone) of the
     row's capture, device, precision, shape and cache state, its id in `floor (move)` and its
     median time over the row's in `of the floor` (none: both cells empty)
  C11 the overview's run in sum (csv/summary-cublas.csv): per capture, kernel and precision with
     a C8 reference on some shape, each shape's best verified configuration: the shapes, the
     geomean and worst of reference time over its time and where; and against the C10 floor the
     shapes, geomean, worst and where, and the shapes below 0.9 (empty where no shape has a
     floor)
  C9 energy (only when the database has energy readings or spans): csv/energy-measurements.csv
     has one row per measurement with a reading, its J per launch, average W and launches as
     stored (W empty exactly where the database has no power_w);
     csv/energy-cublas.csv one row per verified TSM2/ISM2 measurement with a reading whose C8
     reference has one too, the ratio of their energies and which is the cheaper;
     csv/energy-spans.csv one row per energy span; the page has the section "Energy"

Used by CI on the example database (examples/) and on the test fixture.
"""
import csv, glob, io, json, math, os, re, subprocess, sys, xml.dom.minidom

roofkit, db, out = sys.argv[1:4]
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)


def export(table, fmt):
    r = subprocess.run([roofkit, '--db', db, 'export', '--format', fmt, '--table', table],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit('FAIL: roofkit export --table %s: %s' % (table, r.stderr.strip()))
    return r.stdout


r = subprocess.run([roofkit, '--db', db, 'report', '--out', out], capture_output=True, text=True)
check(r.returncode in (0, 11), 'C1 roofkit report exited %d: %s' % (r.returncode, r.stderr.strip()))
drawn = r.returncode == 0

# The report leaves out the measurements of `roofkit tune` captures (parameter sweeps).
tune_caps = {c['id'] for c in json.loads(export('capture', 'json')) if c['kind'] == 'tune'}
meas = {int(m['id']): m for m in json.loads(export('measurement', 'json'))
        if m['capture_id'] not in tune_caps}
csv_meas = {row['id']: row for row in csv.DictReader(io.StringIO(export('measurement', 'csv')))
            if int(row['capture_id']) not in tune_caps}
check(len(csv_meas) == len(meas), 'export csv and json disagree on the number of rows')
preds = json.loads(export('prediction', 'json'))

seen = {}
tables = {}
for path in sorted(glob.glob(os.path.join(out, 'csv', 'measurements-*.csv'))):
    with open(path, newline='') as f:
        rows = list(csv.DictReader(f))
    tables[os.path.basename(path)[:-4]] = rows
    for row in rows:
        i = int(row['id'])
        check(i not in seen, 'C2 measurement %d listed twice' % i)
        seen[i] = row
        m = meas.get(i)
        if m is None:
            fails.append('C2 %s lists measurement %d, not in the database' % (path, i))
            continue
        for col in ('m', 'n', 'k'):
            check(int(row[col]) == (m[col] or 0), 'C2 measurement %d: %s differs' % (i, col))
        check(row['kernel'] == m['kernel'], 'C2 measurement %d: kernel differs' % i)
        for col, key in (('time median [ns]', 'time_median_ns'), ('time min [ns]', 'time_min_ns')):
            want = m[key]
            got = float(row[col]) if row[col] else None
            check(got == want, 'C2 measurement %d: %s %r != %r' % (i, col, got, want))
check(set(seen) == set(meas), 'C2 the tables list %d measurements, the database holds %d'
      % (len(seen), len(meas)))

compared = 0
for p in preds:
    row = seen.get(int(p['measurement_id']))
    if row is None:
        continue
    compared += 1
    col = '%s [ns]' % p['model']
    got = float(row[col]) if row.get(col) else None
    check(got == p['predicted_time_ns'], 'C3 prediction %s of measurement %s: %r != %r'
          % (p['model'], p['measurement_id'], got, p['predicted_time_ns']))
    check((row.get('%s bound' % p['model']) or None) == p['bound'],
          'C3 bound of %s for measurement %s' % (p['model'], p['measurement_id']))
check(compared > 0 or not preds, 'C3 none of the %d predictions is in the tables' % len(preds))

# C8, C10
BESIDE = ('capture_id', 'device_id', 'precision', 'm', 'n', 'k', 'cache_state')


def cublas_ok(x, c):
    try:
        tf32 = json.loads(c['params'] or '{}').get('tf32') == 1
    except ValueError:
        tf32 = False
    return (c['family'] == 'cublas' and c['verified'] == 1 and not tf32 and
            (c['time_median_ns'] or 0) > 0 and all(c[f] == x[f] for f in BESIDE))


def floor_ok(x, c):
    return (c['family'] == 'move' and c['verified'] == 1 and (c['time_median_ns'] or 0) > 0 and
            all(c[f] == x[f] for f in BESIDE))


def judged(rule, row, m, ok, id_col, ratio_col):
    """The row's judge (the fastest measurement ok accepts): its id in id_col and its time over
    the row's in ratio_col, both empty when none. 1 when it had one."""
    cands = [c for c in meas.values() if ok(m, c)] if m['verified'] != 0 else []
    j = min(cands, key=lambda c: (c['time_median_ns'], c['id'])) if cands else None
    if j is None:
        check(row[ratio_col] == '' and row[id_col] == '',
              '%s measurement %s: %s without one measured' % (rule, row['id'], ratio_col))
        return 0
    check(row[id_col] == str(j['id']), '%s measurement %s: %s %s, expected %s'
          % (rule, row['id'], id_col, row[id_col], j['id']))
    got = float(row[ratio_col]) if row[ratio_col] else None
    want = j['time_median_ns'] / m['time_median_ns']
    check(got is not None and abs(got / want - 1) < 1e-3,
          '%s measurement %s: %s %r != %r' % (rule, row['id'], ratio_col, got, want))
    return 1


neff = nspeed = nfloor = 0
for tid, rows in tables.items():
    for row in rows:
        m = meas.get(int(row['id']))
        if m is None or 'effective GB/s' not in row:
            continue
        e = {'fp32': 4, 'fp64': 8}.get(m['precision'])
        if e and m['m'] and m['n'] and m['k'] and m['time_median_ns']:
            want = (m['m'] * m['k'] + m['k'] * m['n'] + m['m'] * m['n']) * e / m['time_median_ns']
            got = float(row['effective GB/s']) if row['effective GB/s'] else None
            check(got is not None and abs(got / want - 1) < 1e-3,
                  'C8 measurement %s: effective GB/s %r != %r' % (row['id'], got, want))
            neff += 1
        if 'speedup over cuBLAS' in row:
            nspeed += judged('C8', row, m, cublas_ok, 'cuBLAS reference', 'speedup over cuBLAS')
        if 'of the floor' in row:
            nfloor += judged('C10', row, m, floor_ok, 'floor (move)', 'of the floor')
if any(r.get('family') == 'move' for r in meas.values()):
    check(nfloor > 0, 'C10 no floor checked where the database has move measurements')
if any(r.get('family') in ('tsm2', 'ism2') for r in meas.values()):
    check(neff > 0 and nspeed > 0, 'C8 no effective bandwidth or speedup checked (%d, %d)'
          % (neff, nspeed))

# C11
def sums(ok):
    """(capture, kernel, precision) -> [per shape the best judge time / its time, ...] and the
    shape of each."""
    best = {}
    for m in meas.values():
        if m['family'] in ('cublas', 'move') or m['verified'] == 0 or not m['precision']:
            continue
        cands = [c for c in meas.values() if ok(m, c)]
        if not cands or not (m['time_median_ns'] or 0) > 0:
            continue
        j = min(cands, key=lambda c: (c['time_median_ns'], c['id']))
        key = (m['capture_id'], m['kernel'], m['precision'])
        shape = (m['m'], m['n'], m['k'], m['cache_state'])
        r = j['time_median_ns'] / m['time_median_ns']
        best.setdefault(key, {})
        best[key][shape] = max(best[key].get(shape, 0.0), r)
    return best


def close(a, b):
    return a is not None and b is not None and abs(a - b) <= 1e-6 * max(abs(b), 1e-300)


def summed(per_shape):
    """shape -> ratio: the shapes, the geomean, and the worst shape."""
    vals = list(per_shape.values())
    return len(vals), math.exp(sum(math.log(v) for v in vals) / len(vals)), min(
        per_shape, key=per_shape.get)


sp = os.path.join(out, 'csv', 'summary-cublas.csv')
refs, floors = sums(cublas_ok), sums(floor_ok)
got = list(csv.DictReader(open(sp, newline=''))) if os.path.exists(sp) else []
check(len(got) == len(refs), 'C11 summary-cublas.csv: %d rows, expected %d' % (len(got), len(refs)))
for row in got:
    key = (int(row['capture']), row['kernel'], row['precision'])
    want = refs.get(key)
    if want is None:
        check(False, 'C11 summary row %s without a reference in the database' % (key,))
        continue
    nv, gm, worst = summed(want)
    check(int(row['shapes']) == nv and close(float(row['speedup over cuBLAS (geomean)']), gm)
          and close(float(row['worst speedup']), want[worst])
          and row['worst at (m x n x k)'] == '%dx%dx%d' % worst[:3],
          'C11 %s: against cuBLAS %s, expected %d shapes, %r, worst %r at %s'
          % (key, {k: row[k] for k in ('shapes', 'speedup over cuBLAS (geomean)', 'worst speedup')},
             nv, gm, want[worst], worst[:3]))
    fw = floors.get(key)
    if not fw:
        check(row['shapes with a floor'] == '', 'C11 %s: a floor where none was measured' % (key,))
        continue
    nf, fgm, fworst = summed(fw)
    check(int(row['shapes with a floor']) == nf and
          close(float(row['of the floor (geomean)']), fgm) and
          close(float(row['worst of the floor']), fw[fworst]) and
          row['worst of the floor at'] == '%dx%dx%d' % fworst[:3] and
          int(row['shapes below 0.9 of the floor']) == sum(1 for v in fw.values() if v < 0.9),
          'C11 %s: against the floor %s, expected %d shapes, %r, worst %r at %s'
          % (key, {k: row[k] for k in ('shapes with a floor', 'of the floor (geomean)',
                                        'worst of the floor', 'worst of the floor at')},
             nf, fgm, fw[fworst], fworst[:3]))

html_path = os.path.join(out, 'index.html')
html = open(html_path, encoding='utf-8').read()

# C9
def has_energy(m):
    return (m.get('energy_launches') or 0) > 0 and (m.get('energy_j') or 0) > 0


def read_csv(name):
    path = os.path.join(out, 'csv', name)
    return list(csv.DictReader(open(path, newline=''))) if os.path.exists(path) else None


spans = json.loads(export('energy_span', 'json'))
with_energy = {i: m for i, m in meas.items() if has_energy(m)}
nenergy = 0
if with_energy or spans:
    check('<section id="energy">' in html, 'C9 no energy section in index.html')
    rows = read_csv('energy-measurements.csv') or []
    check(with_energy or rows == [], 'C9 an energy-measurements table without readings')
    check(len(rows) == len(with_energy), 'C9 energy-measurements.csv: %d rows, %d readings'
          % (len(rows), len(with_energy)))
    # rows pair up by (J per launch, launches); the average W of each pair must then agree too:
    # an empty cell where the database has no power, the stored power (to 1e-9) where it has one
    def w_cell(v):
        return float(v) if v != '' else None

    def pair_key(r):
        return (r[0], r[1], r[2] is None, r[2] or 0.0)

    by_j = sorted(((float(r['J per launch']), int(r['energy launches']), w_cell(r['average W']))
                   for r in rows), key=pair_key)
    want = sorted(((m['energy_j'], m['energy_launches'], m['power_w'])
                   for m in with_energy.values()), key=pair_key)
    check(len(by_j) == len(want) and all(abs(a[0] / b[0] - 1) < 1e-9 and a[1] == b[1]
                                         for a, b in zip(by_j, want)),
          'C9 energy per launch or launches differ from the database')
    for a, b in zip(by_j, want):
        if b[2] is None or a[2] is None:
            ok = a[2] is None and b[2] is None
        else:
            ok = abs(a[2] - b[2]) <= 1e-9 * abs(b[2])
        check(ok, 'C9 energy-measurements.csv: average W %r where the database has power_w %r '
              '(%.6g J per launch)' % (a[2], b[2], b[0]))
    cub = read_csv('energy-cublas.csv') or []
    expect = []
    for m in with_energy.values():
        if m['family'] not in ('tsm2', 'ism2') or m['verified'] == 0 or not m['time_median_ns']:
            continue
        refs = [c for c in meas.values() if cublas_ok(m, c)]
        ref = min(refs, key=lambda c: (c['time_median_ns'], c['id'])) if refs else None
        if ref is not None and has_energy(ref):
            expect.append((m['kernel'], m['m'], m['n'], m['k'], m['precision'],
                           m['energy_j'] / ref['energy_j']))
    got = []
    for r in cub:
        mm, nn, kk = (int(v) for v in r['shape m x n x k'].split(' x '))
        ratio = float(r['kernel / cuBLAS J'])
        got.append((r['kernel'], mm, nn, kk, r['precision'], ratio))
        check(r['fewer joules'] == (r['kernel'] if ratio < 1 else 'cuBLAS' if ratio > 1
                                    else 'same'), 'C9 fewer joules of %s' % r['shape m x n x k'])
    expect.sort()
    got.sort()
    check(len(got) == len(expect) and all(a[:5] == b[:5] and abs(a[5] / b[5] - 1) < 1e-9
                                          for a, b in zip(got, expect)),
          'C9 energy-cublas.csv: %d rows, expected %d (or a ratio differs)'
          % (len(got), len(expect)))
    srows = read_csv('energy-spans.csv') or []
    check(len(srows) == len(spans), 'C9 energy-spans.csv: %d rows, %d spans'
          % (len(srows), len(spans)))
    nenergy = len(rows) + len(cub) + len(srows)
for tid, rows in tables.items():
    m = re.search(r'<table id="%s">(.*?)</table>' % re.escape(tid), html, re.S)
    if rows:
        check(m is not None, 'C4 index.html has no table %s' % tid)
    if m:
        # rows are '<tr>' or '<tr id="m-ID">' (the charts' points link to the latter)
        check(m.group(1).count('<tr') - 1 == len(rows), 'C4 table %s: %d HTML rows, %d CSV rows'
              % (tid, m.group(1).count('<tr') - 1, len(rows)))

svgs = sorted(glob.glob(os.path.join(out, 'plots', '*.svg')))
for path in svgs:
    try:
        xml.dom.minidom.parse(path)
    except Exception as e:
        fails.append('C5 %s is not well-formed XML: %s' % (path, e))
inlined = re.findall(r'<svg.*?</svg>', html, re.S)
check(len(inlined) == len(svgs), 'C5 index.html inlines %d SVGs, plots/ holds %d'
      % (len(inlined), len(svgs)))
for k, s in enumerate(inlined):
    try:
        xml.dom.minidom.parseString(s)
    except Exception as e:
        fails.append('C5 inlined SVG %d is not well-formed XML: %s' % (k, e))
check('<script' not in html, 'C5 index.html has a script')
check(not re.search(r'(src|href)="(https?:)?//', html), 'C5 index.html loads something remote')

# C6
caps = {c['id']: c for c in json.loads(export('capture', 'json'))}
pct = {int(i): float(r['% of roof']) for i, r in seen.items() if r.get('% of roof')}


def key(m):
    return (m['kernel'] or '', m['precision'] or '', m['m'] or 0, m['n'] or 0, m['k'] or 0,
            m['params'] or '')


def rel(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


ntop = 0
# every device with a charted measurement has its overview: a missing file is a failure, not
# an overview with nothing to compare
charted = {m['device_id'] or caps[m['capture_id']]['device_id'] for m in meas.values()
           if m['verified'] != 0 and m['time_median_ns'] is not None}
tops = sorted(glob.glob(os.path.join(out, 'csv', 'top-kernels-d*.csv')))
have = {int(re.search(r'top-kernels-d(\d+)\.csv$', p).group(1)) for p in tops}
check(charted <= have, 'C6 no overview (csv/top-kernels-d<ID>.csv) of device(s) %s'
      % sorted(charted - have))
for path in tops:
    dev = int(re.search(r'top-kernels-d(\d+)\.csv$', path).group(1))
    with open(path, newline='') as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        head = reader.fieldnames
    pcol = [h for h in head if h.startswith('predicted [µs] (')]
    check(len(pcol) == 1, 'C6 %s names no model' % path)
    model = pcol[0][len('predicted [µs] ('):-1] if pcol else ''
    pred = {(int(p['measurement_id'])): p['predicted_time_ns'] for p in preds
            if p['model'] == model and p['predicted_time_ns'] is not None}
    groups, total = {}, 0.0
    for i, m in meas.items():
        d = m['device_id'] or caps[m['capture_id']]['device_id']
        if d != dev or m['verified'] == 0 or m['time_median_ns'] is None:
            continue  # another device, or not charted (failed verification, no time)
        g = groups.setdefault(key(m), {'t': 0.0, 'n': 0, 'p': 0.0, 'pm': 0.0, 'np': 0,
                                       'rt': 0.0, 'rw': 0.0})
        t = m['time_median_ns']
        g['t'] += t
        g['n'] += 1
        total += t
        if i in pred:
            g['p'] += pred[i]
            g['pm'] += t
            g['np'] += 1
        if i in pct:
            g['rt'] += pct[i] * t
            g['rw'] += t
    times = sorted((g['t'] for g in groups.values()), reverse=True)
    check(len(rows) == min(10, len(groups)), 'C6 %s: %d rows for %d kernels'
          % (path, len(rows), len(groups)))
    for r, row in enumerate(rows):
        ntop += 1
        m = meas.get(int(row['measurement']))
        if m is None:
            fails.append('C6 %s row %d: measurement %s not in the database' % (path, r + 1,
                                                                            row['measurement']))
            continue
        g = groups[key(m)]
        what = 'C6 %s row %d (%s)' % (path, r + 1, m['kernel'][:40])
        check(int(row['#']) == r + 1, what + ': rank')
        check(int(row['launches']) == g['n'], what + ': launches %s != %d' % (row['launches'],
                                                                           g['n']))
        check(rel(float(row['time [µs]']), g['t'] * 1e-3), what + ': time %s != %r'
              % (row['time [µs]'], g['t'] * 1e-3))
        check(rel(float(row['time [µs]']), times[r] * 1e-3), what + ': not the %d-th longest'
              % (r + 1))
        check(rel(float(row['share [%]']), 100 * g['t'] / total), what + ': share')
        if g['rw'] > 0:
            check(rel(float(row['% of roof']), g['rt'] / g['rw']), what + ': %% of roof %s != %r'
                  % (row['% of roof'], g['rt'] / g['rw']))
        else:
            check(row['% of roof'] == '', what + ': % of roof without a roof')
        if g['np']:
            check(rel(float(row[pcol[0]]), g['p'] * 1e-3), what + ': predicted %s != %r'
                  % (row[pcol[0]], g['p'] * 1e-3))
            check(abs(float(row['error [%]']) - 100 * (g['p'] - g['pm']) / g['pm']) < 1e-9,
                  what + ': error')
        else:
            check(row[pcol[0]] == '', what + ': a prediction where the model made none')
        check(row['bound'] in ('compute', 'dram', ''), what + ': bound ' + row['bound'])
if drawn and meas:
    fig, tab = html.find('<figure'), html.find('<table')
    check(0 <= fig < tab, 'C6 index.html does not open with a chart before its first table')
    rows_html = set(re.findall(r'<tr id="m-(\d+)">', html))
    links = re.findall(r'<a href="#m-(\d+)"><title>', html)
    check(links and set(links) <= rows_html, 'C6 a point links to no row of the page')
    for name in re.findall(r'<figure id="c-(roofline-d[^"]*)">', html):
        dat = open(os.path.join(out, 'plots', name + '.dat')).read()
        want = 0
        for block in dat.split('\n\n'):
            lines = block.strip('\n').split('\n')
            if any(ln.startswith('#') and 'points:' in ln for ln in lines):
                want += sum(1 for ln in lines if ln and not ln.startswith('#'))
        fig_html = html[html.find('<figure id="c-%s">' % name):]
        fig_html = fig_html[:fig_html.find('</figure>')]
        check(fig_html.count('</title><use') == want, 'C6 %s: %d points, %d titled'
              % (name, want, fig_html.count('</title><use')))

# C7
for args in (['--capture', '999999'], ['--family', 'no_such_family'],
             ['--kernel', 'regex:^no such kernel$'], ['--device', 'GPU-ffffffff-none']):
    refused = out + '-refused'
    r = subprocess.run([roofkit, '--db', db, 'report', '--out', refused] + args,
                       capture_output=True, text=True)
    check(r.returncode == 2 and r.stderr.count('roofkit: error:') == 1
          and not os.path.exists(refused),
          'C7 report %s: exit %d, %r' % (' '.join(args), r.returncode, r.stderr.strip()))
fams = sorted({m['family'] for m in meas.values() if m['family']})
if fams:
    sel = out + '-selected'
    r = subprocess.run([roofkit, '--db', db, 'report', '--out', sel, '--format', 'csv',
                        '--family', fams[0]], capture_output=True, text=True)
    check(r.returncode == 0, 'C7 report --family %s exited %d' % (fams[0], r.returncode))
    got = sorted(os.path.basename(p) for p in glob.glob(os.path.join(sel, 'csv',
                                                                    'measurements-*.csv')))
    check(got == ['measurements-%s.csv' % fams[0]], 'C7 --family %s reports %s' % (fams[0], got))

if fails:
    print('\n'.join('FAIL: ' + f for f in fails[:40]))
    sys.exit(1)
print('PASS: %d measurements in %d tables equal the database; %d predictions; %d SVG charts%s; '
      '%d overview entries; %d energy rows' % (len(seen), len(tables), len(preds), len(svgs),
                                               '' if drawn else ' (gnuplot missing)', ntop,
                                               nenergy))
