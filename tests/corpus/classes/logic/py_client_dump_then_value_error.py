import sys
# A verbose HTTP client prints every exchange before the script parses the result.
for page in range(1, 201):
    status = "503 Service Unavailable (retried)" if page % 50 == 0 else "200 OK"
    print(f"> GET /v1/orders?page={page} HTTP/1.1", file=sys.stderr)
    print(f"> Host: api.internal", file=sys.stderr)
    print(f"< HTTP/1.1 {status}", file=sys.stderr)
    print(f"< Content-Type: application/json", file=sys.stderr)
    print(f"< X-Request-Id: req-{page:06d}", file=sys.stderr)
rows = ["2026-11-27", "27/11/2026"]
import datetime
print([datetime.date.fromisoformat(r) for r in rows])
