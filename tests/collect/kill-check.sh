#!/bin/sh
# kill-check.sh ROOFKIT PROG WORKDIR - what `roofkit profile` keeps of a program killed with
# SIGKILL, on a GPU (ctest label gpu; exit 77, skipped, without one). PROG is gpu_prog100: 100
# launches on 64 MiB arrays, killed by itself with SIGKILL after its 50th launch (after
# cudaDeviceSynchronize, so launch 50 has completed), as the OOM killer or a batch system's time
# limit would. Target: at least 45 of the 50 launches stored (with counters where counters were
# asked for), the database passes integrity_check, the capture is interrupted and its note says
# how many were kept. Prints one line of figures per variant:
#   K1 the default metric set (application replay: both runs killed after launch 50)
#   K2 --replay kernel (one run, CUPTI's kernel replay)
#   K3 --metrics none (timing: launches wait for their Activity records, which a background
#      thread asks for every 0.5 s), killed 1 s after launch 50
#   K4 --metrics none, killed at once: not a target (records of the last 0.5 s may be lost)
#   K0 the same program not killed, default set: 100 of 100, the capture done
set -u
R=$1
P=$2
W=$3
fail=0
rm -rf "$W" && mkdir -p "$W"

if ! "$P" 4 16 >/dev/null 2>&1; then
    echo "no usable GPU (gpu_prog100 4 16 failed): skipped"
    exit 77
fi

# q DB SQL: the first column of the first row (python3's sqlite3: no sqlite3 CLI needed).
q() { python3 -c 'import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone(); print(r[0] if r else "")' "$1" "$2"; }

# variant NAME MIN_STORED MIN_COUNTED WANT_STATUS WANT_RC PROFILE_OPTIONS -- PROGRAM_OPTIONS
variant() {
    name=$1 min=$2 min_counted=$3 want_status=$4 want_rc=$5
    shift 5
    opts=""
    while [ "$1" != "--" ]; do
        opts="$opts $1"
        shift
    done
    shift
    db=$W/$name.db
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$R" --db "$db" profile $opts -- "$P" 100 64 "$@" >"$W/$name.out" 2>"$W/$name.err"
    rc=$?
    secs=$(python3 -c "import sys; print('%.2f' % ($(date +%s.%N) - $t0))")
    n=$(q "$db" "select count(*) from measurement")
    counted=$(q "$db" "select count(distinct measurement_id) from metric where value is not null")
    status=$(q "$db" "select status from capture order by id desc limit 1")
    ok=$(q "$db" "pragma integrity_check")
    note=$(q "$db" "select note from capture order by id desc limit 1")
    echo "$name:$opts $*: $n launches stored ($counted with counters), capture $status, integrity_check $ok, roofkit exit $rc, $secs s; note: $note"
    [ "$ok" = ok ] || { echo "FAIL $name: integrity_check says $ok"; fail=1; }
    [ "$min" -lt 0 ] && return
    [ "$n" -ge "$min" ] || { echo "FAIL $name: $n launches stored, want >= $min"; fail=1; }
    [ "$counted" -ge "$min_counted" ] ||
        { echo "FAIL $name: $counted launches with counters, want >= $min_counted"; fail=1; }
    [ "$status" = "$want_status" ] ||
        { echo "FAIL $name: capture $status, want $want_status"; fail=1; }
    [ "$rc" = "$want_rc" ] || { echo "FAIL $name: roofkit exit $rc, want $want_rc"; fail=1; }
    if [ "$want_status" = interrupted ]; then
        case $note in
        *"was killed by SIGKILL"*) ;;
        *) echo "FAIL $name: the note does not say what was kept"; fail=1 ;;
        esac
        grep -q "warning: .* was killed by SIGKILL" "$W/$name.err" ||
            { echo "FAIL $name: no warning line: $(cat "$W/$name.err")"; fail=1; }
    fi
    [ -d "$db.journal" ] && { echo "FAIL $name: journals left in $db.journal"; fail=1; }
}

variant K1 45 45 interrupted 137 -- --kill-after 50
variant K2 45 45 interrupted 137 --replay kernel -- --kill-after 50
variant K3 45 0 interrupted 137 --metrics none -- --kill-after 50 --kill-delay 1
variant K4 -1 0 interrupted 137 --metrics none -- --kill-after 50
variant K0 100 100 done 0 --
[ $fail = 0 ] && echo "kill-check: all passed"
exit $fail
