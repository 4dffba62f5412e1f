"""Turns wrk --latency output into `scenario req/s p50_ms p99_ms errors`."""
import re
import sys


def to_ms(value: str) -> float:
    number, unit = re.match(r"([\d.]+)(us|ms|s|m)", value).groups()
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def main() -> None:
    scenario, path = sys.argv[1], sys.argv[2]
    text = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p50 = to_ms(re.search(r"^\s+50%\s+(\S+)", text, re.M).group(1))
    p99 = to_ms(re.search(r"^\s+99%\s+(\S+)", text, re.M).group(1))
    errors = 0
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    if non2xx:
        errors += int(non2xx.group(1))
    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if sockets:
        errors += sum(int(n) for n in sockets.groups())
    print(f"{scenario:<12} {rps:>10.0f} {p50:>8.2f} {p99:>8.2f} {errors:>8}")


if __name__ == "__main__":
    main()
