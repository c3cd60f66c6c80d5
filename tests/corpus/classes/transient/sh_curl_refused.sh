set -euo pipefail

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

curl -fsS "http://127.0.0.1:$port/v1/rates" -o rates.json
