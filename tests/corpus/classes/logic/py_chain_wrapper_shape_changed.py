import json

payload = json.loads('{"orders": [{"id": 1, "total_cents": 1200}, {"id": 2, "total_cents": 800}]}')

class ImportFailed(Exception):
    pass

def total(orders):
    try:
        return sum(o["amount"] for o in orders)
    except KeyError as e:
        raise ImportFailed("could not sum the orders of the day") from e

print(total(payload["orders"]))
