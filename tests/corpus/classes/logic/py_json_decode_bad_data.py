import json
# The endpoint answers with HTML now instead of JSON.
payload = "<html><body>Moved</body></html>"
print(json.loads(payload)["orders"])
