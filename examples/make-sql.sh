#!/bin/sh
# make-sql.sh DB [SQL] - writes the SQL text that examples/ keeps (default
# examples/h100.sql): the two pragmas that mark a roofkit database of this schema,
# then sqlite3's dump. `sqlite3 x.db < h100.sql` gives the database back.
set -eu
db=$1
sql=${2:-$(dirname "$0")/h100.sql}
app=$(sqlite3 "$db" "PRAGMA application_id")
ver=$(sqlite3 "$db" "PRAGMA user_version")
[ "$app" = 1383034726 ] || { echo "make-sql: $db is not a roofkit database" >&2; exit 1; }
sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
{
    echo "-- roofkit example database (examples/README.md): load with sqlite3 x.db < $(basename "$sql")"
    echo "PRAGMA application_id=$app;"
    echo "PRAGMA user_version=$ver;"
    sqlite3 "$db" .dump
} >"$sql.tmp"
mv "$sql.tmp" "$sql"
echo "make-sql: wrote $sql ($(wc -c <"$sql") bytes)"
