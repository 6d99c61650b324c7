/* The benchmark's peer: an event store as an app developer would write it on SQLite.
 *
 *   sqlite-peer DB LINES.jsonl BATCH
 *   sqlite-peer --read DB
 *   sqlite-peer --insert-one DB LINE
 *
 * The first form stores each JSON line as a row (WAL, synchronous=FULL, json_valid checked, an
 * index by goal), BATCH rows per transaction, then rebuilds a per-goal projection in SQL
 * (entries, sum of amounts, last title). Prints {"rows":N,"append":SECONDS,"rebuild":SECONDS}.
 * `--read` reads that projection as a goal list would (every goal's row) and prints the count;
 * `--insert-one` stores one line in its own transaction, as an app recording one entry does.
 * The benchmark times the last two as whole processes. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void check(int rc, sqlite3 *db, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "sqlite-peer: %s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static sqlite3 *open_db(const char *path) {
    sqlite3 *db;
    check(sqlite3_open(path, &db), db, "open");
    check(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", 0, 0, 0), db, "pragmas");
    return db;
}

static int read_goals(const char *path) {
    sqlite3 *db = open_db(path);
    sqlite3_stmt *q;
    check(sqlite3_prepare_v2(db, "SELECT goal, events, entries, amount, titled FROM goals ORDER BY goal", -1, &q, 0), db, "prepare");
    long rows = 0;
    double amount = 0;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        rows++;
        amount += sqlite3_column_double(q, 3);
    }
    check(rc, db, "read");
    printf("{\"goals\":%ld,\"amount\":%.1f}\n", rows, amount);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return 0;
}

static int insert_one(const char *path, const char *line) {
    sqlite3 *db = open_db(path);
    sqlite3_stmt *insert;
    check(sqlite3_prepare_v2(db, "INSERT INTO events (goal, body) VALUES (json_extract(?1, '$.goal'), ?1)", -1, &insert, 0), db, "prepare");
    sqlite3_bind_text(insert, 1, line, -1, SQLITE_STATIC);
    check(sqlite3_step(insert), db, "insert");
    sqlite3_finalize(insert);
    sqlite3_close(db);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--read") == 0) return read_goals(argv[2]);
    if (argc == 4 && strcmp(argv[1], "--insert-one") == 0) return insert_one(argv[2], argv[3]);
    if (argc != 4) {
        fprintf(stderr, "usage: sqlite-peer DB LINES.jsonl BATCH | --read DB | --insert-one DB LINE\n");
        return 2;
    }
    long batch = atol(argv[3]);
    FILE *in = fopen(argv[2], "r");
    if (!in) { perror(argv[2]); return 1; }
    sqlite3 *db;
    check(sqlite3_open(argv[1], &db), db, "open");
    check(sqlite3_exec(db,
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
        "CREATE TABLE events (position INTEGER PRIMARY KEY, goal TEXT, body TEXT NOT NULL CHECK (json_valid(body)));"
        "CREATE INDEX events_by_goal ON events (goal);", 0, 0, 0), db, "schema");
    sqlite3_stmt *insert;
    check(sqlite3_prepare_v2(db, "INSERT INTO events (goal, body) VALUES (json_extract(?1, '$.goal'), ?1)", -1, &insert, 0), db, "prepare");
    char *line = 0;
    size_t cap = 0;
    ssize_t len;
    long rows = 0;
    double start = now();
    check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db, "begin");
    while ((len = getline(&line, &cap, in)) > 0) {
        if (line[len - 1] == '\n') line[--len] = 0;
        if (len == 0) continue;
        sqlite3_bind_text(insert, 1, line, (int)len, SQLITE_STATIC);
        check(sqlite3_step(insert), db, "insert");
        sqlite3_reset(insert);
        if (++rows % batch == 0) {
            check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db, "commit");
            check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db, "begin");
        }
    }
    check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db, "commit");
    double append = now() - start;
    start = now();
    check(sqlite3_exec(db,
        "BEGIN; DROP TABLE IF EXISTS goals;"
        "CREATE TABLE goals AS SELECT goal, count(*) AS events,"
        " sum(CASE WHEN json_extract(body, '$.type') = 'progressRecorded' THEN 1 ELSE 0 END) AS entries,"
        " total(json_extract(body, '$.amount')) AS amount,"
        " max(CASE WHEN json_extract(body, '$.title') IS NOT NULL THEN position END) AS titled"
        " FROM events GROUP BY goal; COMMIT;", 0, 0, 0), db, "rebuild");
    double rebuild = now() - start;
    printf("{\"rows\":%ld,\"append\":%.6f,\"rebuild\":%.6f}\n", rows, append, rebuild);
    sqlite3_finalize(insert);
    sqlite3_close(db);
    free(line);
    return 0;
}
