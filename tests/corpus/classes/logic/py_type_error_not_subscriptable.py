import json
# The API returns a list of orders now, not an object with "orders".
body = json.loads('[{"id": 1}, {"id": 2}]')
for order in body["orders"]:
    print(order["id"])
