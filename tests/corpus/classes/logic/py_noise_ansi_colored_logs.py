import sys
RED, YELLOW, DIM, END = "\033[31m", "\033[33m", "\033[2m", "\033[0m"
for i in range(1, 6):
    print(f"{DIM}2026-11-28T07:00:0{i}.123Z{END} {YELLOW}WARN{END} slow response from the cache (status 503, served stale)", file=sys.stderr)
print(f"{DIM}2026-11-28T07:00:07.001Z{END} INFO merging 5 sources", file=sys.stderr)
rows = [{"price": "12.5"}, {"price": "n/a"}]
print(sum(float(r["price"]) for r in rows))
