"""The summary of `make bench-fairness`: per mode, each run's quiet p99 and throughput beside
the noisy school against alone in the same run, and the medians over the runs."""

import statistics
import sys


def read_mode(path):
    mode = {"rows": {}, "cpu": {}, "notes": []}
    for line in open(path):
        words = line.split()
        if line.startswith("== "):
            mode["spec"] = line[3:].strip()
        elif words[:1] and words[0].startswith("cpu+"):
            labels = ("server", "postgres", "wrk-quiet", "wrk-noisy")
            mode["cpu"][words[0][4:]] = {k: int(words[words.index(k) + 1]) for k in labels}
        elif len(words) == 5 and words[1].replace(".", "").isdigit():
            mode["rows"][words[0]] = [float(w) for w in words[1:]]
        elif "load average" in line or "peak RSS" in line:
            mode["notes"].append(line.strip())
    return mode


def summarise(mode):
    rows = mode["rows"]
    print(f"== {mode['spec']}")
    for note in mode["notes"]:
        print(f"   {note}")
    runs = sorted({name.split("#")[1] for name in rows if "#" in name}, key=int)
    alone = [rows[f"quiet+alone#{r}"] for r in runs]
    print(f"   quiet alone: req/s {[round(a[0]) for a in alone]}, p99 ms {[a[2] for a in alone]}")
    for noisy in ("search", "cheap"):
        pairs = [(rows.get(f"quiet+{noisy}#{r}"), rows[f"quiet+alone#{r}"]) for r in runs]
        pairs = [(side, base) for side, base in pairs if side]
        if not pairs:
            continue
        p99 = [side[2] / base[2] for side, base in pairs]
        rps = [side[0] / base[0] for side, base in pairs]
        noisy_rps = [rows[f"noisy+{noisy}#{r}"][0] for r in runs if f"noisy+{noisy}#{r}" in rows]
        noisy_errors = [rows[f"noisy+{noisy}#{r}"][3] for r in runs if f"noisy+{noisy}#{r}" in rows]
        print(
            f"   beside {noisy:6}: quiet p99 x alone {[round(x, 1) for x in p99]} median {statistics.median(p99):.1f}; "
            f"throughput of alone {[round(x, 2) for x in rps]} median {statistics.median(rps):.2f}; "
            f"noisy req/s {[round(x) for x in noisy_rps]}, non-2xx {[round(x) for x in noisy_errors]}"
        )
    for scenario in ("alone", "search", "cheap"):
        cpu = [mode["cpu"][f"{scenario}#{r}"] for r in runs if f"{scenario}#{r}" in mode["cpu"]]
        if cpu:
            median = {k: statistics.median(c[k] for c in cpu) / 100 for k in cpu[0]}
            print(f"   cpu s ({scenario}, median): " + ", ".join(f"{k} {v:.1f}" for k, v in median.items()))
    for single in ("search-alone", "first-page", "quiet+slow"):
        if single in rows:
            req, p50, p99, errors = rows[single]
            print(f"   {single}: {req:.0f} req/s, p50 {p50} ms, p99 {p99} ms, errors {errors:.0f}")


for path in sys.argv[1:]:
    summarise(read_mode(path))
