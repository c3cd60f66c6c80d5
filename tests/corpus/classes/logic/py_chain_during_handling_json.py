import json

raw = "<html><body>Moved to the new API</body></html>"

def parse(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise ValueError("the feed did not return JSON")

print(parse(raw)["items"])
