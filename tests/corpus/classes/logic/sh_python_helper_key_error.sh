set -euo pipefail
echo '{"orders": [{"id": 1, "amount": 3}]}' > export.json
python3 -c 'import json; print(sum(o["total"] for o in json.load(open("export.json"))["orders"]))'
