import json
# The report's settings file was never created on this machine.
with open("settings.json") as f:
    settings = json.load(f)
print(settings["endpoint"])
