import json
order = json.loads('{"customer": {"full_name": "Ana"}}')
print(order["customer"]["name"])
