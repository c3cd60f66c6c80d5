def load(config):
    try:
        return config["endpoint"]
    except KeyError as e:
        raise RuntimeError("the report settings have no endpoint") from e

print(load({"url": "https://example.org"}))
