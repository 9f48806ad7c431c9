-- roofkit example database (examples/README.md): load with sqlite3 x.db < h100.sql
PRAGMA application_id=1383034726;
PRAGMA user_version=1;
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE device(id INTEGER PRIMARY KEY);
COMMIT;
