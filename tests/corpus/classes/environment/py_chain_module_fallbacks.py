try:
    import ujson as json
except ImportError:
    try:
        import simplejson as json
    except ImportError:
        import orjson as json

print(json.dumps({"ok": True}))
