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

Used by CI on the example database (examples/) and on the test fixture.
"""
import csv, glob, io, json, os, re, subprocess, sys, xml.dom.minidom

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

for p in preds:
    row = seen.get(int(p['measurement_id']))
    if row is None:
        continue
    col = '%s [ns]' % p['model']
    got = float(row[col]) if row.get(col) else None
    check(got == p['predicted_time_ns'], 'C3 prediction %s of measurement %s: %r != %r'
          % (p['model'], p['measurement_id'], got, p['predicted_time_ns']))
    check((row.get('%s bound' % p['model']) or None) == p['bound'],
          'C3 bound of %s for measurement %s' % (p['model'], p['measurement_id']))

html_path = os.path.join(out, 'index.html')
html = open(html_path, encoding='utf-8').read()
for tid, rows in tables.items():
    m = re.search(r'<table id="%s">(.*?)</table>' % re.escape(tid), html, re.S)
    if rows:
        check(m is not None, 'C4 index.html has no table %s' % tid)
    if m:
        check(m.group(1).count('<tr>') - 1 == len(rows), 'C4 table %s: %d HTML rows, %d CSV rows'
              % (tid, m.group(1).count('<tr>') - 1, len(rows)))

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

if fails:
    print('\n'.join('FAIL: ' + f for f in fails[:40]))
    sys.exit(1)
print('PASS: %d measurements in %d tables equal the database; %d predictions; %d SVG charts%s'
      % (len(seen), len(tables), len(preds), len(svgs), '' if drawn else ' (gnuplot missing)'))
