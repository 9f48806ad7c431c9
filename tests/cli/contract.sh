#!/bin/sh
# contract.sh ROOFKIT CONTRACT_FILE - the command-line contract test.
#
# Each line of CONTRACT_FILE is one invocation:
#     EXIT | EXPECTED TEXT | ARGUMENTS
# EXIT is the exit code; EXPECTED TEXT must appear in stderr (or in stdout when it
# starts with "stdout:"); ARGUMENTS are split like a shell would. Each invocation
# runs in a fresh directory holding these fixtures:
#     notdb.db   a text file            random.db  4 KiB of random bytes
#     other.db   another program's SQLite database (needs python3)
#     empty.db   a zero-byte file       newer.db   a roofkit database of schema 999
# For every invocation that fails (EXIT != 0) the fixtures must be byte-for-byte
# unchanged and no file may appear: bad input never writes. Every failure must print
# exactly one line starting "roofkit: error:" on stderr.
set -u
ROOFKIT=$1
CONTRACT=$2
fail=0
n=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make_fixtures() {
    rm -rf "$work/d" && mkdir "$work/d"
    printf 'this is not a database\n' >"$work/d/notdb.db"
    head -c 4096 /dev/urandom >"$work/d/random.db"
    : >"$work/d/empty.db"
    python3 -c "import sqlite3; c=sqlite3.connect('$work/d/other.db'); c.execute('create table t(x)'); c.execute('insert into t values (1)'); c.commit()"
    python3 -c "import sqlite3; c=sqlite3.connect('$work/d/newer.db'); c.execute('pragma application_id=1383034726'); c.execute('pragma user_version=999'); c.execute('create table future(x)'); c.commit()"
}

snapshot() { (cd "$work/d" && find . -type f -exec sha256sum {} + | sort); }

while IFS= read -r line; do
    case "$line" in '' | '#'*) continue ;; esac
    n=$((n + 1))
    want_rc=$(printf '%s' "$line" | cut -d'|' -f1 | tr -d ' ')
    want_text=$(printf '%s' "$line" | cut -d'|' -f2 | sed 's/^ *//; s/ *$//')
    args=$(printf '%s' "$line" | cut -d'|' -f3-)
    make_fixtures
    before=$(snapshot)
    (cd "$work/d" && eval "set -- $args" && "$ROOFKIT" "$@" >"$work/out" 2>"$work/err")
    rc=$?
    stream="$work/err"
    text=$want_text
    case "$want_text" in stdout:*) stream="$work/out" text=${want_text#stdout:} ;; esac
    why=""
    [ "$rc" = "$want_rc" ] || why="exit $rc, expected $want_rc"
    if [ -n "$text" ] && ! grep -qF -- "$text" "$stream"; then
        why="${why:+$why; }missing text '$text'"
    fi
    if [ "$want_rc" != 0 ]; then
        [ "$(snapshot)" = "$before" ] || why="${why:+$why; }files changed or created"
        nerr=$(grep -c '^roofkit: error:' "$work/err")
        [ "$nerr" = 1 ] || why="${why:+$why; }$nerr error lines, expected 1"
    fi
    if [ -n "$why" ]; then
        fail=$((fail + 1))
        echo "FAIL: roofkit $args: $why"
        sed 's/^/    stderr: /' "$work/err" | head -5
    fi
done <"$CONTRACT"
echo "contract: $n invocations, $fail failed"
# a contract file that cannot be read or holds no invocation checks nothing: a failure
[ "$n" -gt 0 ] || echo "FAIL: no invocation in $CONTRACT"
[ "$fail" = 0 ] && [ "$n" -gt 0 ]
