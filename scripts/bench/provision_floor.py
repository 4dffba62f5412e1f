"""PostgreSQL's floor for provisioning a school: the baseline script alone, sent as one
query per school (`CREATE SCHEMA`, the search path, the script), on JOBS connections at
once, nothing else (no registry row, no domain, no roles, no recorded versions).

    provision_floor.py URL BASELINE_SQL PREFIX COUNT JOBS   create PREFIX1..PREFIXCOUNT, print ms per school
    provision_floor.py URL --drop PREFIX COUNT             drop them again (not timed)

Timed like `tenant create-many`: from before the connections are opened to the last
commit.
"""

import sys
import threading
import time

import psycopg2


def create(url, script, prefix, count, jobs):
    next_index = iter(range(1, count + 1))
    lock = threading.Lock()
    errors = []

    def worker():
        conn = psycopg2.connect(url)
        conn.autocommit = True  # the multi-statement query is its own transaction
        cur = conn.cursor()
        while True:
            with lock:
                index = next(next_index, None)
            if index is None:
                break
            schema = f"{prefix}{index}"
            try:
                cur.execute(f"CREATE SCHEMA {schema}; SET LOCAL search_path TO {schema};\n{script}")
            except psycopg2.Error as err:
                errors.append(f"{schema}: {err}")
                break
        conn.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        sys.exit("floor failed: " + "; ".join(errors))
    print(f"{elapsed * 1000 / count:.2f}")


def drop(url, prefix, count):
    conn = psycopg2.connect(url)
    conn.autocommit = True
    cur = conn.cursor()
    for index in range(1, count + 1):
        cur.execute(f"DROP SCHEMA IF EXISTS {prefix}{index} CASCADE")
    conn.close()


if __name__ == "__main__":
    if sys.argv[2] == "--drop":
        drop(sys.argv[1], sys.argv[3], int(sys.argv[4]))
    else:
        url, baseline, prefix, count, jobs = sys.argv[1:6]
        create(url, open(baseline).read(), prefix, int(count), int(jobs))
