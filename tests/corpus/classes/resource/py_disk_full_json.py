import json
with open("/dev/full", "w") as out:
    json.dump({"rows": list(range(10000))}, out)
