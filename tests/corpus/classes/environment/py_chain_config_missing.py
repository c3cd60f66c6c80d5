import json

class ConfigError(Exception):
    pass

def load_settings(path="settings/report.json"):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise ConfigError(f"could not load the report settings from {path}") from e

settings = load_settings()
print(settings["recipients"])
