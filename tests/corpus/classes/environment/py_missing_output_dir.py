import json
with open("out/reports/daily.json", "w") as f:
    json.dump({"total": 3}, f)
