set -euo pipefail
python3 -c 'import json; print(json.load(open("config/report.json"))["to"])'
