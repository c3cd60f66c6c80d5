import json

class RetryError(Exception):
    """What a retry helper raises when every attempt failed."""

def with_retries(fn, attempts=3):
    last = None
    for _ in range(attempts):
        try:
            return fn()
        except Exception as e:
            last = e
    raise RetryError(f"gave up after {attempts} attempts; try again later") from last

event = json.loads('{"type": "invoice.paid", "data": {"object": {"amount_paid": 1200}}}')
print(with_retries(lambda: event["data"]["object"]["amount"]))
