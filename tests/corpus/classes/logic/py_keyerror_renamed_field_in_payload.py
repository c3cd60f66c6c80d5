import json
event = json.loads('{"userId": 42, "eventType": "signup", "createdAt": "2026-11-27"}')

def route(event):
    handlers = {"signup": "welcome", "login": "audit"}
    return handlers[event["event_type"]]

print(route(event))
